"""Each planned unit as check's cache sees it, and what is read and written unit by unit.

A target's units share one pack file (`<target>.pack`), so a changed unit rewrites its
target's file only. Everything here reads defensively: damaged data is None, never an
exception, and its unit is replayed or its share taken from its cassette again.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.atomic import JOURNAL
from fcreplay.cache.codec import ShapeError
from fcreplay.cache.digest import Digest
from fcreplay.cache.keys import UnitKeys
from fcreplay.cache.memo import key_of
from fcreplay.cache.pack import Entry, NewEntry, Pack, copied, read_pack, write_pack
from fcreplay.cache.shares import Share, UnitShares, share_from
from fcreplay.cache.stats import StatIndex
from fcreplay.engine.plan import Unit
from fcreplay.engine.runner import RunResult
from fcreplay.inputs.suite import Suite
from fcreplay.record import AttemptRecord
from fcreplay.runmarks import RunScope
from fcreplay.schemadiff.differ import SchemaDiffer, SchemaDiffResult

DAMAGED = (ShapeError, KeyError, TypeError, ValueError, IndexError, AttributeError)
_PLACEHOLDER = "cached"


@dataclass
class Planned:
    """One unit of the run, and what the cache holds or the replay gave for it."""

    unit: Unit
    path: str
    """Its cassette, as `Unit.cassette_path` names it."""
    key: str | None
    pack: Pack
    """Its target's pack."""
    entry: Entry | None = None
    """The cache entry the unit is taken from; None: it is replayed."""
    digest: Digest | None = None
    digest_bytes: bytes = b""
    """Its digest as JSON when replayed now (as its worker made it), zlib-compressed in a
    run too large to fold during the replay (see `digest_json`)."""
    share: Share | None = None
    share_bytes: bytes = b""
    problems: list[AttemptRecord] = field(default_factory=list)
    records: list[AttemptRecord] = field(default_factory=list)

    def digest_json(self) -> bytes:
        """Its digest as JSON (from `digest_bytes`: JSON starts with `{`, which no zlib
        stream does)."""
        data = self.digest_bytes
        return data if data[:1] == b"{" else zlib.decompress(data)

    @property
    def ids(self) -> tuple[str, str, str]:
        """(target, variant, case_id)"""
        return (self.unit.target.name, self.unit.variant, self.unit.case.id)


def pack_path(folder: Path, target: str) -> Path:
    """The pack of one target's units."""
    return folder / f"{target}.pack"


def read_packs(folder: Path, targets: Iterable[str], skip: Collection[str] = ()) -> dict[str, Pack]:
    """The pack of each target (without the entries of the units in `skip`)."""
    return {name: read_pack(pack_path(folder, name), skip) for name in targets}


def target_key(
    suite: Suite, keys: UnitKeys, index: StatIndex, members: list[Planned], scope: RunScope
) -> str | None:
    """What a target's fold is made from: its units' keys, its golden file, the scope."""
    if any(p.key is None for p in members):
        return None
    name, golden = members[0].unit.target.name, suite.config.golden
    return key_of(
        [
            keys.shared,
            name,
            index.digest(golden / f"{name}.json"),
            index.digest(golden / JOURNAL),
            json.dumps(scope.to_json()),
            *(f"{p.unit.label} {p.key}" for p in members),
        ]
    )


def schema_key(suite: Suite, keys: UnitKeys, planned: list[Planned]) -> str:
    """What the schema diff's result is made from: every cassette's share, in plan order."""
    config = suite.config
    parts: list[bytes | str] = [
        keys.shared,
        repr(config.schema_diff_allow),
        repr([target.name for target in config.targets]),
    ]
    for p in planned:
        parts += [p.path, p.share_bytes]
    return key_of(parts)


def schema_of(suite: Suite, planned: list[Planned], shares: UnitShares) -> SchemaDiffResult:
    """The schema diff of every cassette's share; a kept share that is damaged is taken
    from its cassette again (its unit's records need no replay for that)."""
    bodies: dict[str, tuple[Any, str]] = {}
    # A replayed unit's share refers to requests the replay saw (`shares.bodies`): only
    # packs with a unit taken from them are read for theirs.
    for pack in {id(p.pack): p.pack for p in planned if p.entry is not None}.values():
        bodies.update((h, (b, u)) for h, (b, u) in pack.bodies().items())
    bodies.update(shares.bodies)
    again = UnitShares(SchemaDiffer(suite))
    differ = SchemaDiffer(suite)
    for p in planned:
        share = p.share
        if share is None and p.entry is not None:
            share = decoded(share_from, raw_json(p.pack, p.entry.share))
        if share is None or any(hashed not in bodies for _, hashed, _ in share.seen):
            path = Path(p.path)
            if path.exists():
                from fcreplay.cassettes.store import load_cassette

                again.add(load_cassette(path, suite.config.limits), p.unit)
            else:
                again.note_missing(path)
            share = again.shares[p.path]
            bodies.update(again.bodies)
        differ.absorb(share.collected(p.path, bodies))
    return differ.result()


def settle(shares: UnitShares, planned: list[Planned], suite: Suite) -> None:
    """The schema differ's decisions per adapter, from its first recorded unit in plan order."""
    from fcreplay.cassettes.store import load_cassette

    first: dict[str, Planned] = {}
    for p in planned:
        if p.unit.target.adapter not in first and Path(p.path).is_file():
            first[p.unit.target.adapter] = p
    for p in first.values():
        shares.settle(load_cassette(Path(p.path), suite.config.limits), p.unit)


def decoded(reader: Any, data: Any) -> Any:
    """`reader(data)`, or None when there is no data or it is damaged."""
    if data is None:
        return None
    try:
        return reader(data)
    except DAMAGED:
        return None


def raw_json(pack: Pack, span: tuple[int, int]) -> Any:
    """The JSON value stored at `span`; None when it does not parse."""
    try:
        return json.loads(pack.raw(span))
    except ValueError:
        return None


def problem_records(pack: Pack, entry: Entry) -> list[AttemptRecord]:
    """The unit's attempts that drifted or found no recording, read from its lines."""
    lengths, data = pack.stamped([entry], _PLACEHOLDER)
    found, offset = [], 0
    try:
        for length in lengths:
            record = AttemptRecord.from_json(strictjson.loads(data[offset : offset + length]))
            offset += length
            if record.drift is not None or record.replay_miss:
                found.append(record)
    except ValueError:
        return []
    return found


def dumps(value: Any) -> bytes:
    """Compact JSON bytes."""
    return _COMPACT.encode(value).encode()


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""Made once: `json.dumps` with options builds an encoder on every call (one per unit)."""


def write_packs(
    folder: Path, planned: list[Planned], run: RunResult, shares: UnitShares, reps: int
) -> None:
    """Rewrite the pack of each target that had a unit replayed (others stay as they are).

    The finished log is read one target at a time (a target's units are together in
    plan order), so no more than one target's lines are held."""
    targets: dict[str, list[Planned]] = {}
    for p in planned:
        targets.setdefault(p.unit.target.name, []).append(p)
    if _attempt_lines(run.log_path) != len(planned) * reps:
        return  # not the log this run should have written: cache nothing from it
    marker = b'"run_id":"' + run.run_id.encode() + b'"'
    with run.log_path.open("rb") as log:
        log.readline()  # the run header
        for name, members in targets.items():
            lines = [log.readline() for _ in range(len(members) * reps)]
            if all(p.entry is not None for p in members):
                continue
            found = [line.find(marker) for line in lines]
            if any(at < 0 for at in found):
                return  # not the log this run should have written: cache nothing more
            pack = members[0].pack
            labels = {p.unit.label for p in members}
            entries = {
                label: copied(pack, e) for label, e in pack.entries.items() if label not in labels
            }
            # The requests each entry's share refers to: read from a kept share, known
            # for a new one (parsing every share again would cost as much as a fold).
            known: dict[str, Share] = {}
            for position, p in enumerate(members):
                if p.entry is not None:
                    entries[p.unit.label] = copied(pack, p.entry)
                elif p.key is not None and p.digest_bytes:
                    mine = range(position * reps, (position + 1) * reps)
                    if len({found[i] for i in mine}) != 1:
                        continue  # its lines are not laid out alike: not kept
                    entries[p.unit.label] = NewEntry(
                        p.key,
                        b"".join(lines[i] for i in mine),
                        tuple(len(lines[i]) for i in mine),
                        found[mine[0]] + len(b'"run_id":"'),
                        len(run.run_id),
                        p.digest_json(),
                        p.share_bytes,
                    )
                    if p.share is not None:
                        known[p.unit.label] = p.share
            del lines
            _write(pack_path(folder, name), pack, entries, shares, known)


def _attempt_lines(path: Path) -> int:
    """The lines of a finished log between its header and its run-end (-1: not one)."""
    count, last = 0, b""
    with path.open("rb") as log:
        while block := log.read(_READ_BYTES):
            count += block.count(b"\n")
            last = block
    return count - 2 if last.endswith(b"\n") else -1


_READ_BYTES = 1 << 20


def _write(
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
    if wanted <= pack.body_hashes:
        # No request of a new kind: the bodies are written as they were read.
        write_pack(path, entries, {}, kept=(pack.raw(pack.bodies_span), pack.body_hashes))
        return
    bodies = dict(pack.bodies())
    bodies.update({hashed: [body, uri] for hashed, (body, uri) in shares.bodies.items()})
    write_pack(path, entries, {h: bodies[h] for h in sorted(wanted) if h in bodies})
