"""check through its cache: units whose inputs are unchanged are not replayed.

Each unit's entry (`pack`) holds its run-log lines, its digest (what its records give
the report, the golden diff and the staleness) and its cassette's schema-diff share,
under a key of everything they depend on (`keys`). The replay runs the other units
and the log gets every line in plan order. The serial tail adds the digests up per
target (`fold`), reusing a target's fold, and the schema diff's result, while what
they were made from is unchanged (`memo`). Cold and warm checks take the same path
through the same JSON forms, so a warm check prints what a cold one prints.

Everything read from the cache is checked before the replay starts; what fails a
check is replayed instead.
"""

from __future__ import annotations

import json
import os
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from fcreplay.cache import fold
from fcreplay.cache.codec import schema_from
from fcreplay.cache.digest import Digest, digest_bytes, digest_from, digest_of
from fcreplay.cache.keys import UnitKeys
from fcreplay.cache.memo import Memo, read_memo, write_memo
from fcreplay.cache.pack import Pack
from fcreplay.cache.packing import PackWriter
from fcreplay.cache.planned import (
    Planned,
    SchemaShares,
    decoded,
    dumps,
    packed_digest,
    problem_records,
    read_packs,
    schema_key,
    schema_of,
    settle,
    target_key,
)
from fcreplay.cache.shares import UnitShares
from fcreplay.cache.stats import StatIndex
from fcreplay.engine.plan import Unit
from fcreplay.engine.progress import Progress
from fcreplay.engine.runner import ReplayOptions, RunResult, planned_units, replay
from fcreplay.golden.diff import GoldenDiff
from fcreplay.inputs.prices import Price
from fcreplay.inputs.suite import Suite
from fcreplay.record import AttemptKey, AttemptRecord
from fcreplay.runmarks import RunScope
from fcreplay.schemadiff.differ import SchemaDiffer, SchemaDiffResult
from fcreplay.shards import Shard

INDEX, MEMO = "stat-index.json", "tail.json"


@dataclass(frozen=True)
class CheckParts:
    """What check prints and decides on, as the cache gives it."""

    run: RunResult
    """The replay (its `records`: only the attempts replayed now)."""
    report: dict[str, Any]
    schema: SchemaDiffResult
    golden: GoldenDiff
    attempts: int
    problems: tuple[AttemptRecord, ...]
    """Every attempt that drifted or found no recording, in plan order."""
    unsafe: int
    reused: int
    """Units taken from the cache."""
    notes: tuple[str, ...] = ()


class _Digests:
    """Each replayed unit's digest, made where it ran (`pools.Condense`): the parent keeps
    only the records of attempts that drifted or found no recording. When a target's last
    replayed unit comes in, `done` folds it, while the workers replay on.

    A worker adds up the digests of the targets it replays every unit of (`fold.Part`, in
    plan order), so that the parent joins a few parts instead of reading every digest
    back. A unit's digest (JSON) is held until its target's pack is written: while the
    workers replay, as soon as the target is in; in one process, from the finished log,
    so held compressed till then."""

    def __init__(
        self, prices: dict[str, Price], planned: list[Planned], done: Callable[[str], None]
    ) -> None:
        self._prices = prices
        self._planned = {p.unit.label: p for p in planned}
        self._position = {p.unit.label: n for n, p in enumerate(planned)}
        self._left = Counter(p.unit.target.name for p in planned if p.entry is None)
        self._units_left = sum(self._left.values())
        self._done = done
        cached = {p.unit.target.name for p in planned if p.entry is not None}
        self._whole = set(self._left) - cached
        self.parts: dict[str, list[tuple[int, fold.Part]]] = {}
        """Per target, the parts workers sent, by the plan position of their first unit."""

    def of(self, unit: Unit, records: list[AttemptRecord]) -> tuple[bytes, Digest]:
        digest = digest_of(records, self._prices)
        return digest_bytes(digest), digest

    def keeps(self, record: AttemptRecord) -> bool:
        return record.drift is not None or record.replay_miss

    def take(self, unit: Unit, made: tuple[bytes, Digest]) -> None:
        p = self._planned[unit.label]
        data, p.digest = made
        p.digest_bytes = zlib.compress(data, 1)  # held until the run has ended
        self._count(unit.target.name)

    def joined(
        self, made: list[tuple[Unit, tuple[bytes, Digest]]]
    ) -> tuple[list[bytes], list[tuple[str, fold.Part]]]:
        parts: list[tuple[str, fold.Part]] = []
        alike: dict[Any, fold.Seen] = {}
        for unit, (_, digest) in made:
            name = unit.target.name
            if name in self._whole:
                if not parts or parts[-1][1].target != name:
                    parts.append((unit.label, fold.Part(name)))
                parts[-1][1].add((name, unit.variant, unit.case.id), digest, alike)
        return [data for _, (data, _) in made], parts

    def take_joined(
        self, units: list[Unit], joined: tuple[list[bytes], list[tuple[str, fold.Part]]]
    ) -> None:
        datas, parts = joined
        for first, part in parts:
            self.parts.setdefault(part.target, []).append((self._position[first], part))
        planned = self._planned
        for unit, data in zip(units, datas, strict=True):
            planned[unit.label].digest_bytes = data
        # A chunk's units are consecutive in plan order, in which a target's are together.
        for name, count in Counter(unit.target.name for unit in units).items():
            self._count(name, count)

    def _count(self, name: str, count: int = 1) -> None:
        self._left[name] -= count
        self._units_left -= count
        # The last target in is folded after the replay: the workers, idle by then, still
        # hold their memory until the pool ends, and a fold's own peak would add to theirs.
        if not self._left[name] and self._units_left:
            self._done(name)


class _Reuse:
    """The units the replay takes from the cache (`runner.Reuse`)."""

    def __init__(self, planned: list[Planned], reps: int) -> None:
        self._planned, self._reps = planned, reps
        self._labels = {p.unit.label for p in planned if p.entry is not None}

    def covers(self, unit: Unit) -> bool:
        return unit.label in self._labels

    def lines(self, run_id: str) -> Iterator[tuple[list[tuple[AttemptKey, int]], bytes]]:
        by_pack: dict[int, tuple[Pack, list[Planned]]] = {}
        for p in self._planned:
            if p.entry is not None:
                by_pack.setdefault(id(p.pack), (p.pack, []))[1].append(p)
        # A target's units are together in plan order: one block per target, so that no
        # more than one target's lines are held.
        for pack, known in by_pack.values():
            found, data = pack.stamped([p.entry for p in known if p.entry is not None], run_id)
            keys = [(*p.ids, n) for p in known for n in range(1, self._reps + 1)]
            yield list(zip(keys, found, strict=True)), data


def cached_check(
    suite: Suite,
    *,
    read: bool = True,
    processes: int | None = None,
    progress: Progress | None = None,
    shard: Shard | None = None,
) -> CheckParts:
    """Replay what the cache cannot answer and fold the tail; `read=False` answers
    nothing from the cache (it is written afresh)."""
    config = suite.config
    folder = config.cache
    index = StatIndex(folder / INDEX)
    memo = read_memo(folder / MEMO) if read else Memo()
    options = ReplayOptions(processes=processes, shard=shard)
    keys = UnitKeys(suite, index)
    reps = config.repetitions
    units = planned_units(suite, options)
    # Without reading, the units replayed now need no entries: only the others' are kept.
    skip = () if read else {u.label for u in units}
    names = dict.fromkeys(u.target.name for u in units)
    packs = read_packs(folder, names, skip, replaced=not read and shard is None)
    planned = []
    folder_name = str(config.cassettes)
    for unit in units:
        # As `Unit.cassette_path` names it, without pathlib's cost per unit.
        path = os.path.join(folder_name, unit.target.name, unit.variant, f"{unit.case.id}.json")
        planned.append(Planned(unit, path, keys.key(unit, path), packs[unit.target.name]))
    for p in planned:
        entry = p.pack.entries.get(p.unit.label)
        if read and entry is not None and p.key is not None and entry.key == p.key:
            p.entry = entry if len(entry.lines) == reps else None
    scope = RunScope(shard=shard)
    targets: dict[str, list[Planned]] = {}
    for p in planned:
        targets.setdefault(p.unit.target.name, []).append(p)
    target_keys = {name: target_key(suite, keys, index, ps, scope) for name, ps in targets.items()}
    folds: dict[str, fold.TargetFold] = {}
    for name, members in targets.items():
        key = target_keys[name]
        kept = decoded(fold.fold_from, memo.target(name, key)) if key else None
        if kept is not None:
            folds[name] = kept
        for p in members:
            if p.entry is not None and kept is None:
                p.digest = decoded(
                    lambda d, p=p: digest_from(d, p.ids), packed_digest(p.pack, p.entry)
                )
                p.entry = p.entry if p.digest is not None else None
        with_problems = (
            set(kept.problem_units)
            if kept
            else {p.unit.label for p in members if p.digest and p.digest.problems}
        )
        for p in members:
            if p.entry is not None and p.unit.label in with_problems:
                p.problems = problem_records(p.pack, p.entry)
                p.entry = p.entry if p.problems else None
    shares = UnitShares(SchemaDiffer(suite))
    if any(p.entry is None for p in planned):
        settle(shares, planned, suite)
    reuse = _Reuse(planned, reps)
    changed = False

    # Folds made while the workers replay, as compressed JSON: read into `folds` (and the
    # memo) once the pool has ended, so that the parent does not hold them beside the
    # workers (at 100k about 20 MiB of objects and 8 MiB of JSON).
    pending: dict[str, bytes] = {}

    def fold_target(name: str) -> None:
        if name in folds or name in pending:
            return
        members = targets[name]
        sent = digests.parts.pop(name, None)
        if sent is not None:
            parts = [part for _, part in sorted(sent, key=lambda item: item[0])]
        else:
            parts = [fold.part_of(name, ((p.ids, _digest(p)) for p in members))]
        # The run's scope is the shard's (`replay` scopes the run as `options` does).
        made = fold.target_fold(name, parts, config.golden, scope)
        for p in members:
            p.digest = None  # one target's digests at a time, not the run's
        pending[name] = zlib.compress(fold.fold_bytes(made), 1)

    def take_folds() -> None:
        nonlocal changed
        for name, packed in pending.items():
            raw = zlib.decompress(packed)
            folds[name] = fold.fold_from(json.loads(raw))
            key = target_keys[name]
            if key is not None:
                memo.targets[name] = (key, raw)
                changed = True
        pending.clear()

    digests = _Digests(dict(config.prices), planned, fold_target)
    early_shares = SchemaShares(suite, planned, shares)

    def written(name: str) -> None:
        if name in pending:  # folded when its last unit came in: its digests are in its pack
            for p in targets[name]:
                p.digest_bytes = b""
        early_shares.take(name)

    packer = PackWriter(folder, planned, shares, reps, written=written)
    run = replay(
        suite,
        replace(options, observer=shares, reuse=reuse, condense=digests, logged=packer.block),
        progress=progress,
    )
    packer.replayed(run.run_id)
    early_shares.closed = True  # the rest is taken by `schema_of`
    by_label = {p.unit.label: p for p in planned}
    for record in run.records:
        by_label[record.unit].records.append(record)
    for p in planned:
        if p.entry is not None:
            p.share_bytes = p.pack.raw(p.entry.share)
        elif p.share is None:  # else taken when its pack was written
            p.share = shares.shares[p.path]
            p.share_bytes = shares.encoded(p.share)
    for name in targets:
        fold_target(name)  # those with no unit replayed now, and the last one in
    take_folds()
    made_from = schema_key(suite, keys, planned)
    schema = decoded(schema_from, memo.schema_result(made_from)) if read else None
    if schema is None:
        raw = dumps(schema_of(suite, planned, shares, early_shares).to_json())
        schema = schema_from(json.loads(raw))
        memo.schema = (made_from, raw)
        changed = True
    ordered = [folds[name] for name in targets]
    problems = [
        r
        for p in planned
        for r in (
            [replace(r, run_id=run.run_id) for r in p.problems]
            if p.entry is not None
            else [r for r in p.records if r.drift is not None or r.replay_miss]
        )
    ]
    parts = CheckParts(
        run=run,
        report=fold.report(ordered, run.run_id),
        schema=schema,
        golden=fold.golden(ordered, {p.ids for p in planned}, run_id=run.run_id, scope=run.scope),
        attempts=sum(f.attempts for f in ordered),
        problems=tuple(problems),
        unsafe=sum(f.unsafe for f in ordered),
        reused=sum(p.entry is not None for p in planned),
    )
    try:
        packer.prepare()
        index.save()
        packer.finish(run)
        if changed:
            write_memo(folder / MEMO, memo)
    except OSError as exc:
        return replace(parts, notes=(f"{folder}: the check cache was not written ({exc})",))
    return parts


def _digest(p: Planned) -> Digest:
    """The unit's digest: read from the cache, or as its worker made it."""
    if p.digest is None:
        p.digest = digest_from(json.loads(p.digest_json()), p.ids)
    return p.digest
