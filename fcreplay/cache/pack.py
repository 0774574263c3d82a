"""The cache's data file: per unit its key, run-log lines, digest and schema-diff share.

Layout: a magic line, a JSON header line (format, fcreplay version, index length,
CRC-32 of the rest), a small JSON index, then a blob: the run-log lines back to back
(in the plan order of the run that wrote them), then each unit's digest and share
and the request bodies the shares refer to, as JSON, read only when needed. Each
line is kept with where its run id is, so a new run's id is put in when the line is
copied to a new log. A file that fails a check is not read at all; an entry that
fails its own is a miss. Only JSON is parsed: nothing in the file can run code.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcreplay.cache.files import write_bytes_atomically
from fcreplay.version import __version__

MAGIC = b"fcreplay-check-cache\n"
FORMAT = 2

Line = tuple[int, int, int, int]
"""A line in the blob: start, length, where its run id starts in it, the id's length."""
Span = tuple[int, int]
"""Bytes in the blob: start, length."""


@dataclass(frozen=True)
class Entry:
    """One unit's cache entry as stored (its parts are read and checked when used)."""

    key: str
    start: int
    """Where its lines start in the blob (they lie back to back)."""
    lengths: tuple[int, ...]
    at: int
    """Where the run id starts in each of its lines."""
    size: int
    """The length of the run id in its lines."""
    digest: Span
    share: Span

    @property
    def lines(self) -> tuple[Line, ...]:
        """Each line's start, length, run id start and run id length."""
        found, start = [], self.start
        for length in self.lengths:
            found.append((start, length, self.at, self.size))
            start += length
        return tuple(found)


@dataclass
class Pack:
    """The entries of the cache, and the blob their parts are in."""

    entries: dict[str, Entry] = field(default_factory=dict)
    """unit label (target/variant/case) -> entry"""
    blob: bytes = b""
    bodies_span: Span = (0, 0)
    body_hashes: frozenset[str] = frozenset()
    """The fingerprint hashes `bodies` holds (without reading it)."""
    _bodies: dict[str, Any] | None = None

    def raw(self, span: Span) -> bytes:
        """The bytes of `span`."""
        start, length = span
        return self.blob[start : start + length]

    def bodies(self) -> dict[str, Any]:
        """fingerprint hash -> [request body, URI]; {} when damaged."""
        if self._bodies is None:
            try:
                found = json.loads(self.raw(self.bodies_span)) if self.bodies_span[1] else {}
            except ValueError:
                found = {}
            self._bodies = found if isinstance(found, dict) else {}
        return self._bodies

    def stamped(self, entries: Sequence[Entry], run_id: str) -> tuple[list[int], bytes]:
        """The lines of `entries`, in order, with `run_id` put in: their lengths and bytes."""
        stamp = run_id.encode()
        lines = [line for entry in entries for line in entry.lines]
        if all(line[3] == len(stamp) for line in lines):
            # The usual case: each stretch of lines that lie back to back in the blob
            # copied at once, the run ids overwritten in place.
            data = bytearray()
            for stretch in _stretches(lines):
                base, first = len(data), stretch[0][0]
                data += self.blob[first : stretch[-1][0] + stretch[-1][1]]
                for start, _, at, size in stretch:
                    data[base + start - first + at : base + start - first + at + size] = stamp
            return [line[1] for line in lines], bytes(data)
        blob = self.blob
        pieces = [
            blob[start : start + at] + stamp + blob[start + at + size : start + length]
            for start, length, at, size in lines
        ]
        return [len(piece) for piece in pieces], b"".join(pieces)


def _stretches(lines: list[Line]) -> list[list[Line]]:
    """`lines` cut where one does not start where the one before ends."""
    found: list[list[Line]] = []
    for line in lines:
        if found and found[-1][-1][0] + found[-1][-1][1] == line[0]:
            found[-1].append(line)
        else:
            found.append([line])
    return found


def read_pack(path: Path) -> Pack:
    """The pack at `path`; an empty one when there is none or it fails a check."""
    try:
        data = path.read_bytes()
    except OSError:
        return Pack()
    try:
        return _parse(data)
    except (ValueError, TypeError, KeyError, IndexError):
        return Pack()  # damaged, or another fcreplay's: start over


def _parse(data: bytes) -> Pack:
    if not data.startswith(MAGIC):
        raise ValueError("not a cache file")
    end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC) : end])
    if header["format"] != FORMAT or header["fcreplay"] != __version__:
        raise ValueError("another format")
    if zlib.crc32(memoryview(data)[end + 1 :]) != header["crc"]:
        raise ValueError("damaged")
    size = header["index"]
    index = json.loads(data[end + 1 : end + 1 + size])
    blob = data[end + 1 + size :]
    entries = {}
    for label, (key, start, lengths, at, size, digest, share) in index["units"].items():
        if not (isinstance(key, str) and isinstance(label, str) and isinstance(lengths, list)):
            raise ValueError("damaged")
        numbers = (start, at, size, *lengths)
        if not all(type(n) is int and n >= 0 for n in numbers):
            raise ValueError("damaged")
        if start + sum(lengths) > len(blob) or any(at + size > n for n in lengths):
            raise ValueError("damaged")
        entries[label] = Entry(
            key, start, tuple(lengths), at, size, _span(digest, len(blob)), _span(share, len(blob))
        )
    hashes = index["body_hashes"]
    if not (isinstance(hashes, list) and all(isinstance(h, str) for h in hashes)):
        raise ValueError("damaged")
    return Pack(entries, blob, _span(index["bodies"], len(blob)), frozenset(hashes))


def _span(value: Any, blob: int) -> Span:
    start, length = value
    if not (type(start) is int and type(length) is int and 0 <= start <= start + length <= blob):
        raise ValueError("damaged")
    return start, length


@dataclass(frozen=True)
class NewEntry:
    """An entry to write: its lines back to back, each one's length, where the run id
    starts in each and its length, and its digest and share as JSON bytes."""

    key: str
    lines: bytes
    lengths: tuple[int, ...]
    at: int
    size: int
    digest: bytes
    share: bytes


def copied(pack: Pack, entry: Entry) -> NewEntry:
    """An entry of `pack`, to write into the next one."""
    lines = pack.blob[entry.start : entry.start + sum(entry.lengths)]
    digest, share = pack.raw(entry.digest), pack.raw(entry.share)
    return NewEntry(entry.key, lines, entry.lengths, entry.at, entry.size, digest, share)


def write_pack(
    path: Path,
    entries: Mapping[str, NewEntry],
    bodies: Mapping[str, Any],
    *,
    kept: tuple[bytes, frozenset[str]] | None = None,
) -> None:
    """Write the pack (atomically: a reader sees the old file or the new); `kept`: the
    bodies as the old pack holds them (JSON bytes and hashes), written as they are."""
    pieces: list[bytes] = []
    offset = 0

    def put(data: bytes) -> list[int]:
        nonlocal offset
        pieces.append(data)
        offset += len(data)
        return [offset - len(data), len(data)]

    starts = {label: put(entry.lines)[0] for label, entry in entries.items()}
    units = {
        label: [
            entry.key,
            starts[label],
            list(entry.lengths),
            entry.at,
            entry.size,
            put(entry.digest),
            put(entry.share),
        ]
        for label, entry in entries.items()
    }
    if kept is not None:
        where, hashes = put(kept[0]), sorted(kept[1])
    else:
        where, hashes = (
            put(json.dumps(dict(bodies), separators=(",", ":")).encode()),
            sorted(bodies),
        )
    document = {"units": units, "bodies": where, "body_hashes": hashes}
    index = json.dumps(document, separators=(",", ":")).encode()
    rest = index + b"".join(pieces)
    header = {"format": FORMAT, "fcreplay": __version__, "index": len(index)}
    header["crc"] = zlib.crc32(rest)
    write_bytes_atomically(path, MAGIC + json.dumps(header).encode() + b"\n" + rest)
