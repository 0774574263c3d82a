"""Writing check's cache: the pack of each target that had a unit replayed, once it is in.

With worker processes the parent gets each chunk's run-log lines as one block (the
runner's `logged`); a target's lines are set aside until every replayed unit of the
target is in, and the target's pack is written then, while the workers replay the rest.
Set aside, they stay where the blocks hold them while the targets in progress have few
(`HELD_BYTES`, at 10k exchanges always: nothing is copied until the pack is written),
else in a file of their own without a name (the page cache holds them, not the parent:
at 100k a target's lines are 19 MiB), read back from it. A pack is written at the next
block, since a chunk's digests and shares come in after its lines. What is left is
written after the replay: from the lines set aside, or from the finished log when there
were none (one process). Only the targets in progress have lines set aside: the workers
replay in plan order, in which a target's units are together.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fcreplay.atomic import sweep
from fcreplay.cache.aside import HELD_BYTES, SetAside
from fcreplay.cache.pack import NewEntry, Pack, copied, kept_bodies, read_bodies, write_pack
from fcreplay.cache.pieces import READ_BYTES, Piece
from fcreplay.cache.planned import Planned, pack_path
from fcreplay.cache.shares import Share, UnitShares
from fcreplay.engine.runner import RunResult
from fcreplay.record import AttemptKey

Lines = list[tuple[bytes, int, int]]
"""A unit's lines, in attempt order: the bytes each is in, its start there and its length."""
Held = list[tuple[int, int, int]]
"""A unit's lines set aside, in attempt order: each one's start in its target's file, its
length, and where the run id's marker is in it (-1: not where the first line has it)."""
EntryOf = Callable[[Planned, bytes], NewEntry | None]
"""A replayed unit's new entry, from its digest (None: its lines are not all there)."""

_IGNORE = "# Written by fcreplay: its check cache, safe to delete at any time.\n*\n"
_MARKER = b'"run_id":"'


class PackWriter:
    """Writes the packs of the targets that had a unit replayed (others stay as they are)."""

    def __init__(
        self,
        folder: Path,
        planned: list[Planned],
        shares: UnitShares,
        reps: int,
        *,
        written: Callable[[str], None] = lambda name: None,
    ) -> None:
        self._folder, self._shares, self._reps = folder, shares, reps
        self._on_written = written
        """Told each target whose pack was written while the workers replay."""
        self._planned = planned
        self._targets: dict[str, list[Planned]] = {}
        for p in planned:
            self._targets.setdefault(p.unit.target.name, []).append(p)
        left = {name: sum(p.entry is None for p in ps) * reps for name, ps in self._targets.items()}
        self._left = {name: count for name, count in left.items() if count}
        """Per target with a unit replayed, the lines still to come."""
        self._held: dict[tuple[str, str, str], Held] = {}
        self._aside: dict[str, SetAside] = {}
        """Per target in progress, its lines as they came."""
        self._ready: list[str] = []
        self._written: set[str] = set()
        self._prepared = False
        self._failed: OSError | None = None

    def block(
        self, run_id: str, keys: Sequence[AttemptKey], sizes: Sequence[int], data: bytes
    ) -> None:
        """Take a block of lines the workers made, as the log gets it (the runner's `logged`):
        the lines of the targets in progress are set aside in a file, not held."""
        if self._failed is not None:
            return
        self._write_ready(run_id)
        try:
            self._set_aside(run_id, keys, sizes, data)
        except OSError as exc:
            self._failed = exc  # reported when the replay has ended, as a pack not written

    def _set_aside(
        self, run_id: str, keys: Sequence[AttemptKey], sizes: Sequence[int], data: bytes
    ) -> None:
        marker = _MARKER + run_id.encode() + b'"'
        held, left, offset = self._held, self._left, 0
        stretch: tuple[str, int, int] | None = None  # (target, start, end) in `data`
        for key, size in zip(keys, sizes, strict=True):
            # A block holds replayed units only (those taken from the cache are not sent).
            name = key[0]
            if name in left:
                aside = self._aside.get(name)
                if aside is None:
                    self.prepare()
                    aside = self._aside[name] = SetAside(self._folder)
                if stretch is None or stretch[0] != name or stretch[2] != offset:
                    if stretch is not None:
                        self._aside[stretch[0]].add(data, stretch[1], stretch[2])
                    stretch = (name, offset, offset)
                stretch = (name, stretch[1], offset + size)
                mine = held.setdefault((name, key[1], key[2]), [])
                # Where the run id is in the line: where the unit's first line has it.
                if mine:
                    at = mine[0][2]
                    at = at if data.startswith(marker, offset + at, offset + size) else -1
                else:
                    at = data.find(marker, offset, offset + size) - offset
                mine.append((aside.end + offset - stretch[1], size, at))
                left[name] -= 1
                if not left[name]:
                    self._ready.append(name)
            offset += size
        if stretch is not None:
            self._aside[stretch[0]].add(data, stretch[1], stretch[2])
        if sum(aside.held for aside in self._aside.values()) > HELD_BYTES:
            for aside in self._aside.values():
                aside.spill()

    def replayed(self, run_id: str) -> None:
        """Write the packs of the targets that are in, once the replay has ended (so that
        the schema diff takes the last one in as it took the others)."""
        self._write_ready(run_id)

    def finish(self, run: RunResult) -> None:
        """Write what is left, once the replay has ended (OSError: a pack was not written)."""
        self.prepare()
        self._write_ready(run.run_id)
        if self._failed is not None:
            raise self._failed
        self._held.clear()
        for aside in self._aside.values():
            aside.close()
        self._aside.clear()
        rest = [name for name in self._left if name not in self._written]
        if rest:
            self._from_log(run, rest)

    def prepare(self) -> None:
        """Make the cache folder (once), clear what killed writers left, keep it out of git."""
        if self._prepared:
            return
        folder = self._folder
        folder.mkdir(parents=True, exist_ok=True)
        sweep(folder)
        for place in (folder, folder.parent if folder.parent.name == ".fcreplay" else None):
            if place is not None and not (place / ".gitignore").exists():
                (place / ".gitignore").write_text(_IGNORE, encoding="utf-8")
        self._prepared = True

    def _write_ready(self, run_id: str) -> None:
        # Targets whose last lines came in an earlier block: their digests and shares are in.
        ready, self._ready = self._ready, []
        for name in ready:
            if self._failed is not None:
                return
            aside = self._aside.pop(name, None)
            try:
                self.prepare()
                self._write(name, run_id, self._held_entry(aside, run_id))
            except OSError as exc:
                self._failed = exc  # reported when the replay has ended, as a later one is
                return
            finally:
                if aside is not None:
                    aside.close()
            self._on_written(name)

    def _held_entry(self, aside: SetAside | None, run_id: str) -> EntryOf:
        if aside is not None:
            aside.flush()  # read back where it went to its file

        def entry_of(p: Planned, digest: bytes) -> NewEntry | None:
            lines = self._held.pop(p.ids, None)
            if lines is None or aside is None or p.key is None or not digest:
                return None
            return _aside_entry(p.key, lines, aside, run_id, self._reps, digest, p.share_bytes)

        return entry_of

    def _from_log(self, run: RunResult, names: list[str]) -> None:
        """Write the packs of `names` from the finished log, read one target at a time (a
        target's units are together in plan order), so that one target's lines are held."""
        if _attempt_lines(run.log_path) != len(self._planned) * self._reps:
            return  # not the log this run should have written: cache nothing from it
        wanted = set(names)
        with run.log_path.open("rb") as log:
            log.readline()  # the run header
            for name, members in self._targets.items():
                lines = [log.readline() for _ in range(len(members) * self._reps)]
                if name not in wanted:
                    continue
                reps = self._reps
                mine = {
                    p.ids: [(line, 0, len(line)) for line in lines[i * reps : (i + 1) * reps]]
                    for i, p in enumerate(members)
                }
                del lines
                self._write(name, run.run_id, _from(mine, run.run_id, self._reps))

    def _write(self, name: str, run_id: str, entry_of: EntryOf) -> None:
        members = self._targets[name]
        pack = members[0].pack
        labels = {p.unit.label for p in members}
        entries = {
            label: copied(pack, e) for label, e in pack.entries.items() if label not in labels
        }
        # The requests each entry's share refers to: read from a kept share, known for a
        # new one (parsing every share again would cost as much as a fold).
        known: dict[str, Share] = {}
        for p in members:
            if p.entry is not None:
                entries[p.unit.label] = copied(pack, p.entry)
                continue
            if p.share is None:
                p.share = self._shares.shares[p.path]
                p.share_bytes = self._shares.encoded(p.share)
            entry = entry_of(p, _stored_digest(p))
            if entry is not None:
                entries[p.unit.label] = entry
                known[p.unit.label] = p.share
        _write_pack(pack_path(self._folder, name), pack, entries, self._shares, known)
        self._written.add(name)


def _aside_entry(
    key: str, lines: Held, aside: SetAside, run_id: str, reps: int, digest: bytes, share: bytes
) -> NewEntry | None:
    """`_entry` of lines set aside (read when the pack is written)."""
    first, _, at = lines[0] if lines else (0, 0, -1)
    if len(lines) != reps or at < 0:
        return None
    end, together, lengths = first, True, []
    for start, length, where in lines:
        if where != at:
            return None
        together = together and start == end  # each where the one before it ends
        end = start + length
        lengths.append(length)
    if together:
        piece: Piece = aside.piece(first, end - first)
    else:
        piece = b"".join(aside.read(s, n) for s, n, _ in lines)
    return NewEntry(key, piece, tuple(lengths), at + len(_MARKER), len(run_id), digest, share)


def _from(lines: dict[tuple[str, str, str], Lines], run_id: str, reps: int) -> EntryOf:
    def entry_of(p: Planned, digest: bytes) -> NewEntry | None:
        mine = lines.get(p.ids)
        if mine is None or p.key is None or not digest:
            return None
        return _entry(p.key, mine, run_id, reps, digest, p.share_bytes)

    return entry_of


def _stored_digest(p: Planned) -> bytes:
    """A replayed unit's digest as its pack keeps it (JSON; b"": none)."""
    return p.digest_json() if p.digest_bytes else b""


def _entry(
    key: str, lines: Lines, run_id: str, reps: int, digest: bytes, share: bytes
) -> NewEntry | None:
    """A replayed unit's entry; None when its lines are not all there, or not laid out
    alike (each with this run's id at the same place)."""
    if len(lines) != reps:
        return None
    marker = _MARKER + run_id.encode() + b'"'
    first, begin, length = lines[0]
    at = first.find(marker, begin, begin + length) - begin
    if at < 0 or not all(d.startswith(marker, s + at, s + n) for d, s, n in lines[1:]):
        return None
    end = begin
    joined: bytes | memoryview = b""
    for data, start, length in lines:
        if data is not first or start != end:
            joined = b"".join(d[s : s + n] for d, s, n in lines)
            break
        end += length
    else:
        joined = memoryview(first)[begin:end]  # the usual case: one stretch of one block
    lengths = tuple(n for _, _, n in lines)
    return NewEntry(key, joined, lengths, at + len(_MARKER), len(run_id), digest, share)


def _attempt_lines(path: Path) -> int:
    """The lines of a finished log between its header and its run-end (-1: not one)."""
    count, last = 0, b""
    with path.open("rb") as log:
        while block := log.read(READ_BYTES):
            count += block.count(b"\n")
            last = block
    return count - 2 if last.endswith(b"\n") else -1


def _write_pack(
    path: Path,
    pack: Pack,
    entries: dict[str, NewEntry],
    shares: UnitShares,
    known: dict[str, Share],
) -> None:
    wanted: set[str] = set()
    for label, entry in entries.items():
        share = known.get(label)
        if share is not None:
            wanted.update(hashed for _, hashed, _ in share.seen)
            continue
        try:
            wanted.update(hashed for _, hashed, _ in json.loads(entry.share)[0])
        except (ValueError, TypeError, IndexError):
            continue
    kept = None
    if pack.unread is not None:
        kept = read_bodies(pack.unread)
    elif wanted <= pack.body_hashes:
        kept = kept_bodies(pack)
    if kept is not None and wanted <= kept[1]:
        # No request of a new kind: the bodies are written as they were read.
        write_pack(path, entries, {}, kept=kept)
        return
    bodies: dict[str, Any] = dict(pack.bodies())
    bodies.update({hashed: [body, uri] for hashed, (body, uri) in shares.bodies.items()})
    write_pack(path, entries, {h: bodies[h] for h in sorted(wanted) if h in bodies})
