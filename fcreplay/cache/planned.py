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
from typing import Any, cast

import fcreplay.strictjson as strictjson
from fcreplay.adapters.protocol import ReadBackAdapter
from fcreplay.adapters.registry import get_adapter
from fcreplay.atomic import JOURNAL
from fcreplay.cache.codec import ShapeError
from fcreplay.cache.digest import Digest
from fcreplay.cache.keys import UnitKeys
from fcreplay.cache.memo import key_of
from fcreplay.cache.pack import Entry, Pack, read_pack
from fcreplay.cache.shares import Share, UnitShares, share_from
from fcreplay.cache.stats import StatIndex
from fcreplay.engine.plan import Unit
from fcreplay.inputs.suite import Suite
from fcreplay.record import AttemptRecord
from fcreplay.runmarks import RunScope
from fcreplay.schemadiff.differ import SchemaDiffer, SchemaDiffResult
from fcreplay.schemadiff.result import Collected, ReadBack, SeenRequests
from fcreplay.schemadiff.tool_settings import StepSettings

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
    """Its digest as JSON when replayed now (as its worker made it), zlib-compressed when
    replayed in this process (held till the run has ended; see `digest_json`); dropped
    once the target is folded and its pack written."""
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


def read_packs(
    folder: Path, targets: Iterable[str], skip: Collection[str] = (), *, replaced: bool = False
) -> dict[str, Pack]:
    """The pack of each target (without the entries of the units in `skip`); `replaced`:
    every unit of these targets is replayed now, so that no entry is wanted and nothing
    is read (the next pack may keep the old one's request bodies: read when it is written)."""
    if replaced:
        return {name: Pack(unread=pack_path(folder, name)) for name in targets}
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


class SchemaShares:
    """Every cassette's share taken into one schema differ in plan order. The targets whose
    every unit is replayed now are taken as soon as their shares are in (`take`, when their
    pack is written, while the workers replay), up to the first that is not; `schema_of`
    takes the rest."""

    def __init__(self, suite: Suite, planned: list[Planned], shares: UnitShares) -> None:
        self.differ = SchemaDiffer(suite)
        self.taken: set[str] = set()
        self._shares = shares
        self._targets: dict[str, list[Planned]] = {}
        for p in planned:
            self._targets.setdefault(p.unit.target.name, []).append(p)
        self._next = iter(self._targets.items())
        self._waiting: tuple[str, list[Planned]] | None = next(self._next, None)
        self._ready: set[str] = set()
        self.read_back = ReadBack(suite.contract)
        """The requests taken in so far, read back (while the workers replay: the serial
        tail's `result` only reads back the rest)."""
        self._fingerprints: set[tuple[StepSettings, bytes]] = set()
        self._reads: dict[str, bool] = {}
        self.closed = False
        """Set when `schema_of` is to take the rest: later packs add nothing here."""

    def take(self, name: str) -> None:
        """Target `name`'s units have their shares (its pack is written)."""
        if self.closed:
            return
        self._ready.add(name)
        while self._waiting is not None and self._waiting[0] in self._ready:
            name, members = self._waiting
            if any(p.entry is not None or p.share is None for p in members):
                self._waiting = None  # the rest is taken after the replay
                return
            collected = self._together(members)
            self.differ.absorb(collected)
            self._read_back(collected)
            self.taken.add(name)
            self._waiting = next(self._next, None)

    def _together(self, members: list[Planned]) -> Collected:
        """The shares of a target's units as one, which the differ takes as it would take
        each in turn: each request first met in a unit counted there with the later ones'
        counts (by the identity of its settings: equal ones the differ adds up itself)."""
        bodies = self._shares.bodies  # every request a replayed unit's share refers to
        first: dict[tuple[int, str], list[Any]] = {}
        requests = cassettes = 0
        missing: list[str] = []
        skipped: list[str] = []
        for p in members:
            share = p.share
            assert share is not None
            for expected, hashed, count in share.seen:
                known = first.get((id(expected), hashed))
                if known is None:
                    first[(id(expected), hashed)] = [expected, hashed, p.path, count]
                else:
                    known[3] += count
            requests += share.requests
            cassettes += share.cassettes
            missing += share.missing
            skipped += share.skipped
        seen = tuple(
            SeenRequests(expected, bytes.fromhex(hashed), *bodies[hashed], path, count)
            for expected, hashed, path, count in first.values()
        )
        return Collected(seen, requests, cassettes, tuple(missing), tuple(skipped))

    def _read_back(self, collected: Collected) -> None:
        for item in collected.seen:
            key = (item.expected, item.fingerprint)
            if key in self._fingerprints:
                continue
            self._fingerprints.add(key)
            adapter = get_adapter(item.expected.adapter)
            # A share holds only requests of adapters that read back (`SchemaDiffer.add`);
            # a protocol check inspects every member: once per adapter.
            reads = self._reads.get(item.expected.adapter)
            if reads is None:
                reads = self._reads[item.expected.adapter] = isinstance(adapter, ReadBackAdapter)
            if reads:
                read_back = cast(ReadBackAdapter, adapter)
                self.read_back.of(read_back, item.expected, item.fingerprint, item.body, item.uri)


def schema_of(
    suite: Suite, planned: list[Planned], shares: UnitShares, early: SchemaShares | None = None
) -> SchemaDiffResult:
    """The schema diff of every cassette's share (`early`: those of the targets it took
    in already); a kept share that is damaged is taken from its cassette again (its unit's
    records need no replay for that)."""
    bodies: dict[str, tuple[Any, str]] = {}
    # A replayed unit's share refers to requests the replay saw (`shares.bodies`): only
    # packs with a unit taken from them are read for theirs.
    for pack in {id(p.pack): p.pack for p in planned if p.entry is not None}.values():
        bodies.update((h, (b, u)) for h, (b, u) in pack.bodies().items())
    bodies.update(shares.bodies)
    again = UnitShares(SchemaDiffer(suite))
    differ = early.differ if early is not None else SchemaDiffer(suite)
    taken = early.taken if early is not None else set()
    for p in planned:
        if p.unit.target.name in taken:
            continue
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
    return differ.result(early.read_back if early is not None else None)


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


def packed_digest(pack: Pack, entry: Entry) -> Any:
    """The JSON value of an entry's digest; None when damaged."""
    return raw_json(pack, entry.digest)


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
