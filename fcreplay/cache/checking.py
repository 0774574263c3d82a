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
from dataclasses import dataclass, field, replace
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.atomic import JOURNAL, sweep
from fcreplay.cache import fold
from fcreplay.cache.codec import ShapeError, schema_from
from fcreplay.cache.digest import Digest, digest_from, digest_json, digest_of
from fcreplay.cache.keys import UnitKeys
from fcreplay.cache.memo import Memo, key_of, read_memo, write_memo
from fcreplay.cache.pack import Entry, NewEntry, Pack, copied, read_pack, write_pack
from fcreplay.cache.shares import Share, UnitShares, share_from, share_json
from fcreplay.cache.stats import StatIndex
from fcreplay.engine.plan import Unit
from fcreplay.engine.progress import Progress
from fcreplay.engine.runner import ReplayOptions, RunResult, planned_units, replay
from fcreplay.golden.diff import GoldenDiff
from fcreplay.inputs.suite import Suite
from fcreplay.record import AttemptKey, AttemptRecord
from fcreplay.runmarks import RunScope
from fcreplay.schemadiff.differ import SchemaDiffer, SchemaDiffResult
from fcreplay.shards import Shard

PACK, INDEX, MEMO = "units.pack", "stat-index.json", "tail.json"
_IGNORE = "# Written by fcreplay: its check cache, safe to delete at any time.\n*\n"
_PLACEHOLDER = "cached"
_DAMAGED = (ShapeError, KeyError, TypeError, ValueError, IndexError, AttributeError)


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


@dataclass
class _Planned:
    unit: Unit
    path: str
    key: str | None
    entry: Entry | None = None
    """The cache entry the unit is taken from; None: it is replayed."""
    digest: Digest | None = None
    share: Share | None = None
    share_bytes: bytes = b""
    problems: list[AttemptRecord] = field(default_factory=list)
    records: list[AttemptRecord] = field(default_factory=list)

    @property
    def ids(self) -> tuple[str, str, str]:
        return (self.unit.target.name, self.unit.variant, self.unit.case.id)


class _Reuse:
    def __init__(self, planned: list[_Planned], pack: Pack, reps: int) -> None:
        self._planned, self._pack, self._reps = planned, pack, reps
        self._labels = {p.unit.label for p in planned if p.entry is not None}

    def covers(self, unit: Unit) -> bool:
        return unit.label in self._labels

    def lines(self, run_id: str) -> tuple[list[tuple[AttemptKey, int]], bytes]:
        known = [p for p in self._planned if p.entry is not None]
        lengths, data = self._pack.stamped([p.entry for p in known if p.entry], run_id)
        keys = [(*p.ids, n) for p in known for n in range(1, self._reps + 1)]
        return list(zip(keys, lengths, strict=True)), data


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
    pack = read_pack(folder / PACK)
    memo = read_memo(folder / MEMO) if read else Memo()
    options = ReplayOptions(processes=processes, shard=shard)
    keys = UnitKeys(suite, index)
    reps = config.repetitions
    planned = []
    folder_name = str(config.cassettes)
    for unit in planned_units(suite, options):
        # As `Unit.cassette_path` names it, without pathlib's cost per unit.
        path = os.path.join(folder_name, unit.target.name, unit.variant, f"{unit.case.id}.json")
        planned.append(_Planned(unit, path, keys.key(unit, path)))
    for p in planned:
        entry = pack.entries.get(p.unit.label)
        if read and entry is not None and p.key is not None and entry.key == p.key:
            p.entry = entry if len(entry.lines) == reps else None
    scope = RunScope(shard=shard)
    targets: dict[str, list[_Planned]] = {}
    for p in planned:
        targets.setdefault(p.unit.target.name, []).append(p)
    target_keys = {
        name: _target_key(suite, keys, index, name, ps, scope) for name, ps in targets.items()
    }
    folds: dict[str, fold.TargetFold] = {}
    for name, members in targets.items():
        key = target_keys[name]
        kept = _decoded(fold.fold_from, memo.target(name, key)) if key else None
        if kept is not None:
            folds[name] = kept
        for p in members:
            if p.entry is not None and kept is None:
                p.digest = _decoded(
                    lambda d, p=p: digest_from(d, p.ids), _json(pack, p.entry.digest)
                )
                p.entry = p.entry if p.digest is not None else None
        with_problems = (
            set(kept.problem_units)
            if kept
            else {p.unit.label for p in members if p.digest and p.digest.problems}
        )
        for p in members:
            if p.entry is not None and p.unit.label in with_problems:
                p.problems = _problems(pack, p.entry)
                p.entry = p.entry if p.problems else None
    schema: SchemaDiffResult | None = None
    if read and all(p.entry is not None for p in planned):
        schema = _decoded(schema_from, memo.schema_result(_schema_key(suite, keys, planned, pack)))
    if schema is None:
        bodies = pack.bodies()
        for p in planned:
            if p.entry is not None:
                p.share = _decoded(share_from, _json(pack, p.entry.share))
                if p.share is None or any(h not in bodies for _, h, _ in p.share.seen):
                    p.entry = None
    shares = UnitShares(SchemaDiffer(suite))
    reuse = _Reuse(planned, pack, reps)
    run = replay(suite, replace(options, observer=shares, reuse=reuse), progress=progress)
    by_label = {p.unit.label: p for p in planned}
    for record in run.records:
        by_label[record.unit].records.append(record)
    prices = dict(config.prices)
    for p in planned:
        if p.entry is None:
            p.digest = digest_of(p.records, prices)
            p.share = shares.shares[p.path]
            p.share_bytes = _dumps(share_json(p.share))
        elif p.share is not None or schema is None:
            p.share_bytes = pack.raw(p.entry.share)
    changed = False
    for name, members in targets.items():
        if name not in folds:
            made = fold.target_fold(
                name, [(p.ids, _given(p.digest)) for p in members], config.golden, run.scope
            )
            data = json.loads(_dumps(fold.fold_json(made)))
            folds[name] = fold.fold_from(data)
            key = target_keys[name]
            if key is not None:
                memo.targets[name] = (key, data)
                changed = True
    if schema is None:
        schema_key = _schema_key(suite, keys, planned, pack)
        schema = _decoded(schema_from, memo.schema_result(schema_key)) if read else None
        if schema is None:
            bodies = {h: (b, u) for h, (b, u) in pack.bodies().items()}
            bodies.update(shares.bodies)
            differ = SchemaDiffer(suite)
            for p in planned:
                differ.absorb(_given(p.share).collected(p.path, bodies))
            data = json.loads(_dumps(differ.result().to_json()))
            schema = schema_from(data)
            memo.schema = (schema_key, data)
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
        _prepare(folder)
        index.save()
        if run.records:
            _write_pack(folder, pack, planned, run, shares, reps)
        if changed:
            write_memo(folder / MEMO, memo)
    except OSError as exc:
        return replace(parts, notes=(f"{folder}: the check cache was not written ({exc})",))
    return parts


def _target_key(
    suite: Suite,
    keys: UnitKeys,
    index: StatIndex,
    name: str,
    members: list[_Planned],
    scope: RunScope,
) -> str | None:
    """What a target's fold is made from: its units' keys, its golden file, the scope."""
    if any(p.key is None for p in members):
        return None
    golden = suite.config.golden
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


def _schema_key(suite: Suite, keys: UnitKeys, planned: list[_Planned], pack: Pack) -> str:
    """What the schema diff's result is made from: every cassette's share, in plan order."""
    config = suite.config
    parts: list[bytes | str] = [
        keys.shared,
        repr(config.schema_diff_allow),
        repr([target.name for target in config.targets]),
    ]
    for p in planned:
        parts += [p.path, pack.raw(p.entry.share) if p.entry is not None else p.share_bytes]
    return key_of(parts)


def _decoded(reader: Any, data: Any) -> Any:
    """`reader(data)`, or None when there is no data or it is damaged."""
    if data is None:
        return None
    try:
        return reader(data)
    except _DAMAGED:
        return None


def _json(pack: Pack, span: tuple[int, int]) -> Any:
    try:
        return json.loads(pack.raw(span))
    except ValueError:
        return None


def _problems(pack: Pack, entry: Entry) -> list[AttemptRecord]:
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


def _given(value: Any) -> Any:
    assert value is not None  # every unit has its digest and share by the fold
    return value


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _write_pack(
    folder: Any, pack: Pack, planned: list[_Planned], run: RunResult, shares: UnitShares, reps: int
) -> None:
    """The next pack: this run's units (in plan order) and the others' entries kept."""
    lines = _log_lines(run, len(planned) * reps)
    if lines is None:
        return  # not the log this run should have written: cache nothing from it
    labels = {p.unit.label for p in planned}
    entries = {label: copied(pack, e) for label, e in pack.entries.items() if label not in labels}
    for position, p in enumerate(planned):
        if p.entry is not None:
            entries[p.unit.label] = copied(pack, p.entry)
        elif p.key is not None:
            stamped = tuple(lines[position * reps : (position + 1) * reps])
            digest = _dumps(digest_json(_given(p.digest)))
            entries[p.unit.label] = NewEntry(p.key, stamped, digest, p.share_bytes)
    known = dict(pack.bodies())
    known.update({hashed: [body, uri] for hashed, (body, uri) in shares.bodies.items()})
    wanted: set[str] = set()
    for entry in entries.values():
        try:
            wanted.update(hashed for _, hashed, _ in json.loads(entry.share)[0])
        except (ValueError, TypeError, IndexError):
            continue
    write_pack(folder / PACK, entries, {h: known[h] for h in sorted(wanted) if h in known})


def _log_lines(run: RunResult, count: int) -> list[tuple[bytes, int, int]] | None:
    """The attempt lines of the finished log (plan order), each with where its run id is."""
    data = run.log_path.read_bytes()
    lines = data.split(b"\n")[1:-2]  # after the header; before the run-end and the last \n
    marker = b'"run_id":"' + run.run_id.encode() + b'"'
    found = []
    for line in lines:
        at = line.find(marker)
        if at < 0:
            return None
        found.append((line + b"\n", at + len(b'"run_id":"'), len(run.run_id)))
    return found if len(found) == count else None


def _prepare(folder: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    sweep(folder)
    for place in (folder, folder.parent if folder.parent.name == ".fcreplay" else None):
        if place is not None and not (place / ".gitignore").exists():
            (place / ".gitignore").write_text(_IGNORE, encoding="utf-8")
