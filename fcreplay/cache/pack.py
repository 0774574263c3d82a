"""The cache's data file: per unit its key, run-log lines, digest and schema-diff share.

Layout: a magic line, a JSON header line (format, fcreplay version, index length, the
CRC-32 of the index and of each part of the rest), a small JSON index, then a blob: the
run-log lines back to back (in the plan order of the run that wrote them), then each
unit's digest and share (JSON), then the
request bodies the shares refer to (JSON), each read only when needed. Each line is
kept with where its run id is, so a new run's id is put in when the line is copied to
a new log. A file that fails a check is not read at all; an entry that fails its own is
a miss. Only JSON is parsed: nothing in the file can run code. The blob is not held in
memory: its parts are read from the file when used (the file stays open, so a check
writing a new one meanwhile changes nothing of what is read). The entries' part is
checked only when an entry is kept, so a check that replays every unit reads the index
and the bodies alone.
"""

from __future__ import annotations

import json
import os
import weakref
import zlib
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, BinaryIO

from fcreplay.cache.files import write_pieces_atomically
from fcreplay.cache.pieces import READ_BYTES, Piece, after, as_bytes, size_of
from fcreplay.strictjson import exact_json
from fcreplay.version import __version__

MAGIC = b"fcreplay-check-cache\n"
FORMAT = 3

Line = tuple[int, int, int, int]
"""A line in the blob: start, length, where its run id starts in it, the id's length."""
Span = tuple[int, int]
"""Bytes in the blob: start, length."""


class _Blob:
    """The blob of a pack file, read where it lies in the file (kept open until unused)."""

    def __init__(self, descriptor: int, base: int, size: int) -> None:
        self._descriptor, self._base, self.size = descriptor, base, size
        weakref.finalize(self, os.close, descriptor)

    def read(self, start: int, length: int) -> bytes:
        data = os.pread(self._descriptor, length, self._base + start)
        while len(data) < length:  # a regular file reads short only at its end
            more = os.pread(self._descriptor, length - len(data), self._base + start + len(data))
            if not more:
                raise ValueError("the cache file shrank")
            data += more
        return data


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
    source: _Blob | None = None
    bodies_span: Span = (0, 0)
    body_hashes: frozenset[str] = frozenset()
    """The fingerprint hashes `bodies` holds (without reading it)."""
    bodies_crc: int = 0
    """The CRC-32 of the bodies' bytes, as the file's header has it (checked when read)."""
    unread: Path | None = None
    """The file, when it was left unread since every unit of its target is replayed now
    (its request bodies are read when the next pack is written: `read_bodies`)."""
    _bodies: dict[str, Any] | None = None

    def raw(self, span: Span) -> bytes:
        """The bytes of `span`."""
        start, length = span
        if not length or self.source is None:
            return b""
        return self.source.read(start, length)

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
                data += self.raw((first, stretch[-1][0] + stretch[-1][1] - first))
                for start, _, at, size in stretch:
                    data[base + start - first + at : base + start - first + at + size] = stamp
            return [line[1] for line in lines], bytes(data)
        pieces = []
        for start, length, at, size in lines:
            line = self.raw((start, length))
            pieces.append(line[:at] + stamp + line[at + size :])
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


def read_pack(path: Path, skip: Collection[str] = ()) -> Pack:
    """The pack at `path`; an empty one when there is none or it fails a check. The
    entries of the units in `skip` are left out (a check that replays them needs none)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return Pack()
    try:
        return _parse(descriptor, skip)
    except (OSError, ValueError, TypeError, KeyError, IndexError):
        os.close(descriptor)
        return Pack()  # damaged, or another fcreplay's: start over


Bodies = tuple[bytes, frozenset[str], int]
"""Request bodies as a pack holds them: JSON bytes, their fingerprint hashes, their CRC-32."""


def read_bodies(path: Path) -> Bodies | None:
    """The request bodies of the pack at `path` as it holds them, its entries left unread;
    None when there is none or it fails a check."""
    pack = read_pack(path, _EVERY)
    if pack.source is None:
        return None
    try:
        return kept_bodies(pack)
    except (OSError, ValueError):
        return None


def kept_bodies(pack: Pack) -> Bodies:
    """The request bodies of `pack` as it holds them (read from its file)."""
    return pack.raw(pack.bodies_span), pack.body_hashes, pack.bodies_crc


class _Every:
    """Every label (`read_pack` then keeps no entry)."""

    def __contains__(self, label: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


_EVERY: Collection[str] = _Every()


def _parse(descriptor: int, skip: Collection[str]) -> Pack:
    with os.fdopen(os.dup(descriptor), "rb") as stream:
        if stream.read(len(MAGIC)) != MAGIC:
            raise ValueError("not a cache file")
        first = stream.readline(READ_BYTES)
        if not first.endswith(b"\n"):
            raise ValueError("damaged")
        header = json.loads(first)
        if header["format"] != FORMAT or header["fcreplay"] != __version__:
            raise ValueError("another format")
        size = header["index"]
        if not (type(size) is int and size >= 0):
            raise ValueError("damaged")
        index_bytes = stream.read(size)
        if len(index_bytes) != size or zlib.crc32(index_bytes) != header["crc"]:
            raise ValueError("damaged")
        base = len(MAGIC) + len(first) + size
        rest = os.fstat(descriptor).st_size - base
        index = json.loads(index_bytes)
        bodies = _span(index["bodies"], rest)
        if sum(bodies) != rest:
            raise ValueError("damaged")  # the bodies are the blob's last part
        entries = {}
        for label, (key, start, lengths, at, size, digest, share) in index["units"].items():
            if label in skip:
                continue
            if not (isinstance(key, str) and isinstance(label, str) and isinstance(lengths, list)):
                raise ValueError("damaged")
            numbers = (start, at, size, *lengths)
            if not all(type(n) is int and n >= 0 for n in numbers):
                raise ValueError("damaged")
            if start + sum(lengths) > rest or any(at + size > n for n in lengths):
                raise ValueError("damaged")
            entries[label] = Entry(
                key, start, tuple(lengths), at, size, _span(digest, rest), _span(share, rest)
            )
        # Each part is checked as it is read, not held: a large suite's blob is large.
        parts = [(0, bodies[0], header["parts"][0])] if entries else []
        for start, length, crc in [*parts, (*bodies, header["parts"][1])]:
            if _crc(stream, base + start, length) != crc:
                raise ValueError("damaged")
    hashes = index["body_hashes"]
    if not (isinstance(hashes, list) and all(isinstance(h, str) for h in hashes)):
        raise ValueError("damaged")
    # Made last: from here on the descriptor is the blob's to close.
    crc = header["parts"][1]
    return Pack(entries, _Blob(descriptor, base, rest), bodies, frozenset(hashes), crc)


def _crc(stream: BinaryIO, start: int, length: int) -> int:
    """The CRC-32 of `length` bytes of `stream` from `start` (ValueError: fewer there)."""
    stream.seek(start)
    crc = 0
    while length > 0:
        block = stream.read(min(length, READ_BYTES))
        if not block:
            raise ValueError("damaged")
        crc = zlib.crc32(block, crc)
        length -= len(block)
    return crc


def _span(value: Any, blob: int) -> Span:
    start, length = value
    if not (type(start) is int and type(length) is int and 0 <= start <= start + length <= blob):
        raise ValueError("damaged")
    return start, length


@dataclass(frozen=True)
class NewEntry:
    """An entry to write: its lines back to back, each one's length, where the run id
    starts in each and its length, its digest (zlib-compressed JSON) and share (JSON)."""

    key: str
    lines: Piece
    lengths: tuple[int, ...]
    at: int
    size: int
    digest: bytes
    share: bytes


def copied(pack: Pack, entry: Entry) -> NewEntry:
    """An entry of `pack`, to write into the next one."""
    lines = pack.raw((entry.start, sum(entry.lengths)))
    digest, share = pack.raw(entry.digest), pack.raw(entry.share)
    return NewEntry(entry.key, lines, entry.lengths, entry.at, entry.size, digest, share)


def write_pack(
    path: Path,
    entries: Mapping[str, NewEntry],
    bodies: Mapping[str, Any],
    *,
    kept: Bodies | None = None,
) -> None:
    """Write the pack (atomically: a reader sees the old file or the new); `kept`: the
    bodies as the old pack holds them, written as they are."""
    lines: list[Piece] = []
    starts: list[int] = []
    offset = crc = 0
    for entry in entries.values():
        piece = entry.lines
        starts.append(offset)
        offset += size_of(piece)
        joined = after(lines[-1], piece) if lines else None
        if joined is None:
            lines.append(piece)
        else:
            lines[-1] = joined
    for piece in lines:
        # Lines set aside in a file are read twice (here, and as written) rather than held.
        crc = zlib.crc32(as_bytes(piece), crc)
    small: list[bytes] = []
    units = {}
    for (label, entry), start in zip(entries.items(), starts, strict=True):
        digest, share = entry.digest, entry.share
        crc = zlib.crc32(share, zlib.crc32(digest, crc))
        small += (digest, share)
        shared = offset + len(digest)
        units[label] = [
            entry.key,
            start,
            list(entry.lengths),
            entry.at,
            entry.size,
            [offset, len(digest)],
            [shared, len(share)],
        ]
        offset = shared + len(share)
    lines_crc = crc
    if kept is not None:
        data, hashes, crc = kept[0], sorted(kept[1]), kept[2]
    else:
        data, hashes = json.dumps(dict(bodies), separators=(",", ":")).encode(), sorted(bodies)
        crc = zlib.crc32(data)
    document = {"units": units, "bodies": [offset, len(data)], "body_hashes": hashes}
    index = exact_json(document) or json.dumps(document, separators=(",", ":")).encode()
    header = {
        "format": FORMAT,
        "fcreplay": __version__,
        "index": len(index),
        "crc": zlib.crc32(index),
        "parts": [lines_crc, crc],
    }
    head = [MAGIC + json.dumps(header).encode() + b"\n", index]
    # Not joined: a large suite's pieces add up to much (the digests and shares are
    # joined a batch at a time, as they are written).
    write_pieces_atomically(path, chain(head, map(as_bytes, lines), _batches(small), [data]))


def _batches(small: list[bytes]) -> Iterator[bytes]:
    for first in range(0, len(small), _BATCH):
        yield b"".join(small[first : first + _BATCH])


_BATCH = 512
"""The most digests and shares joined into one write."""
