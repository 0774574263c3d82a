"""The serial tail from unit digests: per target, then for the run.

A target's units add up to a `TargetFold` (its tallies, its golden diff against its
golden file, its stale units), which the cache keeps while the target's units and
golden file stay the same; the run's report, golden diff and staleness join the
folds in plan order. Together they mirror `render.report.build_report`,
`golden.diff.diff_run` and `stale.staleness` over the run's records; the tests hold
each pair equal on the same runs.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcreplay.cache.codec import (
    diff_from,
    diff_json,
    shaped,
    tally_from,
    tally_json,
    text,
    texts,
    whole,
)
from fcreplay.cache.digest import Digest
from fcreplay.evidence import Evidence
from fcreplay.golden.diff import EntryDiff, GoldenDiff, argument_changes, classify, in_scope
from fcreplay.golden.store import EntryKey, GoldenEntry, load_golden
from fcreplay.metrics import Tally
from fcreplay.operation import OperationTally
from fcreplay.render.report import SHARED, report_of
from fcreplay.runmarks import RunScope
from fcreplay.stale import Staleness, StaleUnit, UnitKey, record_commands
from fcreplay.strictjson import exact_json
from fcreplay.structdiff import Difference


@dataclass(frozen=True)
class TargetFold:
    """What one target's units add up to."""

    target: str
    tallies: tuple[tuple[Tally, dict[str, Any]], ...]
    """Per variant, in plan order: its tally and its operation figures."""
    shared: Mapping[str, tuple[str, ...]]
    diffs: tuple[EntryDiff, ...]
    unchanged: tuple[tuple[str, str], ...]
    """(case_id, variant) of every entry equal to its golden."""
    stale: tuple[tuple[StaleUnit, tuple[str, ...]], ...]
    """Each stale unit, with its causes in words."""
    attempts: int
    unsafe: int
    problem_units: tuple[str, ...]
    """Labels of the units with attempts that drifted or found no recording."""


@dataclass
class Part:
    """What consecutive units of one target add up to, before the golden diff. A worker
    adds up its chunk's units as they come (they need not cross to the parent one by
    one); parts joined in plan order (`join`) give what adding each unit would."""

    target: str
    tallies: dict[str, tuple[Tally, OperationTally]] = field(default_factory=dict)
    shared: dict[str, set[str]] = field(default_factory=lambda: {name: set() for name in SHARED})
    seen: dict[EntryKey, Seen] = field(default_factory=dict)
    stale: list[tuple[StaleUnit, tuple[str, ...]]] = field(default_factory=list)
    attempts: int = 0
    unsafe: int = 0
    problem_units: list[str] = field(default_factory=list)

    def add(self, unit: UnitKey, digest: Digest, alike: dict[Any, Seen] | None = None) -> None:
        """Add the next unit's digest; `alike`: what the golden diff needs of the units
        added so far, one per distinct value, shared with this one where it is the same
        (a part crosses from its worker pickled, an object shared pickled once)."""
        _, variant, case_id = unit
        known = self.tallies.get(variant)
        if known is None:
            known = self.tallies[variant] = (Tally(self.target, variant), OperationTally())
        known[0].merge(digest.tally)
        known[1].merge(digest.spent)
        for name in SHARED:
            self.shared[name].update(digest.shared[name])
        seen: Seen = (digest.entry, digest.causes, digest.evidence)
        if alike is not None and not digest.evidence:
            seen = alike.setdefault((_entry_key(digest.entry), digest.causes), seen)
        self.seen[(case_id, variant)] = seen
        if digest.stale is not None:
            self.stale.append((digest.stale, digest.described))
        self.attempts += digest.attempts
        self.unsafe += digest.unsafe
        if digest.problems:
            self.problem_units.append("/".join(unit))

    def join(self, later: Part) -> None:
        """Add the part of the units that follow this one's."""
        for variant, (counts, spent) in later.tallies.items():
            known = self.tallies.get(variant)
            if known is None:
                known = self.tallies[variant] = (Tally(self.target, variant), OperationTally())
            known[0].merge(counts)
            known[1].merge(spent)
        for name in SHARED:
            self.shared[name] |= later.shared[name]
        self.seen.update(later.seen)
        self.stale += later.stale
        self.attempts += later.attempts
        self.unsafe += later.unsafe
        self.problem_units += later.problem_units


Seen = tuple[GoldenEntry, tuple[str, ...], Mapping[str, Evidence]]
"""What the golden diff needs of a unit: its entry, why it is stale, its evidence."""


def _entry_key(entry: GoldenEntry) -> tuple[Any, ...]:
    """A golden entry as a hashable value (equal for equal entries, provenance too)."""
    signatures = tuple(
        (None if (s := c.signature) is None else (s[0], tuple(s[1]), s[2]), c.count)
        for c in entry.signatures
    )
    return (entry.verdict, entry.verdicts, signatures, entry.findings, entry.provenance)


def part_of(target: str, units: Iterable[tuple[UnitKey, Digest]]) -> Part:
    """The part of one target's units (in plan order)."""
    part = Part(target)
    for unit, digest in units:
        part.add(unit, digest)
    return part


def target_fold(
    target: str, parts: Sequence[Part], golden_dir: Path, scope: RunScope
) -> TargetFold:
    """Join one target's parts (in plan order) and diff them with its golden file."""
    whole = Part(target)
    for part in parts:
        whole.join(part)
    diffs, unchanged = _golden(target, whole.seen, golden_dir, scope)
    return TargetFold(
        target=target,
        tallies=tuple((counts, spent.figures()) for counts, spent in whole.tallies.values()),
        shared={name: tuple(sorted(values)) for name, values in whole.shared.items()},
        diffs=diffs,
        unchanged=unchanged,
        stale=tuple(whole.stale),
        attempts=whole.attempts,
        unsafe=whole.unsafe,
        problem_units=tuple(whole.problem_units),
    )


def _golden(
    target: str, seen: Mapping[EntryKey, Seen], golden_dir: Path, scope: RunScope
) -> tuple[tuple[EntryDiff, ...], tuple[tuple[str, str], ...]]:
    """One target's part of `diff_run`."""
    baseline = load_golden(golden_dir, target)
    entries: dict[EntryKey, GoldenEntry] = baseline.entries if baseline else {}
    whole = not (scope.shard or scope.case_ids or scope.variants)  # every entry in scope
    wanted = (
        entries
        if whole
        else {key: entry for key, entry in entries.items() if in_scope(key, scope, target)}
    )
    diffs: list[EntryDiff] = []
    unchanged: list[tuple[str, str]] = []
    for key in sorted(set(seen) | set(wanted)):
        before, found = wanted.get(key), seen.get(key)
        after, causes, shown = found if found is not None else (None, (), {})
        kind = classify(before, after, stale=bool(causes))
        if kind is None:
            unchanged.append(key)
            continue
        changes: tuple[Difference, ...] = ()
        if before is not None and after is not None and kind != "stale":
            changes = argument_changes(before, after)
        evidence: tuple[Evidence, ...] = ()
        if found is not None and after is not None and kind != "stale":
            added = sorted(set(after.findings) - set(before.findings if before else ()))
            evidence = tuple(shown[c] for c in added if c in shown)
        diffs.append(
            EntryDiff(target, key[0], key[1], kind, before, after, changes, causes, evidence)
        )
    return tuple(diffs), tuple(unchanged)


def report(folds: Sequence[TargetFold], run_id: str) -> dict[str, Any]:
    """The run report (`build_report` of the run's records)."""
    tallies: dict[tuple[str, str], Tally] = {}
    spent: dict[tuple[str, str], dict[str, Any]] = {}
    shared: dict[str, set[str]] = {name: set() for name in SHARED}
    for fold in folds:
        for counts, figures in fold.tallies:
            key = (counts.target, counts.variant)
            tallies[key] = counts
            spent[key] = figures
        for name in SHARED:
            shared[name].update(fold.shared[name])
    return report_of(tallies, spent, run_id, shared)


def golden(
    folds: Sequence[TargetFold], ran: set[UnitKey], *, run_id: str, scope: RunScope
) -> GoldenDiff:
    """The run's golden diff (`diff_run` of its records, with its scope)."""
    diffs = tuple(diff for fold in folds for diff in fold.diffs)
    unchanged = tuple((fold.target, *key) for fold in folds for key in fold.unchanged)
    stale = [unit for fold in folds for unit in fold.stale]
    counted: Counter[str] = Counter()
    for _, described in stale:
        for words in described:
            counted[words] += 1
    commands = record_commands({unit.key for unit, _ in stale}, ran, scope)
    staleness = Staleness(
        tuple(unit for unit, _ in stale),
        tuple(counted.most_common()),
        tuple(commands) if stale else (),
    )
    return GoldenDiff(run_id, diffs, unchanged, staleness)


def fold_json(fold: TargetFold) -> dict[str, Any]:
    """The JSON form (`fold_from` reads it)."""
    return {
        "target": fold.target,
        "tallies": [[tally_json(t), figures] for t, figures in fold.tallies],
        "shared": {name: list(values) for name, values in fold.shared.items()},
        "diffs": [diff_json(diff) for diff in fold.diffs],
        "unchanged": [list(key) for key in fold.unchanged],
        "stale": [
            [unit.variant, unit.case_id, list(unit.causes), unit.problem, list(words)]
            for unit, words in fold.stale
        ],
        "attempts": fold.attempts,
        "unsafe": fold.unsafe,
        "problem_units": list(fold.problem_units),
    }


def fold_bytes(fold: TargetFold) -> bytes:
    """`fold_json` as compact JSON bytes: by orjson where it writes the same values (it
    writes a non-finite number as null; numbers are only in the figures and the diffs)."""
    data = fold_json(fold)
    if not fold.diffs and all(
        type(value) is not float or math.isfinite(value)
        for _, figures in fold.tallies
        for value in figures.values()
    ):
        fast = exact_json(data)
        if fast is not None:
            return fast
    return _COMPACT.encode(data).encode()


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def fold_from(data: Any) -> TargetFold:
    """Read a fold; ShapeError (a ValueError) or KeyError/TypeError when damaged."""
    data = shaped(data, dict)
    target = text(data["target"])
    tallies = tuple(
        (tally_from(t), dict(shaped(figures, dict))) for t, figures in shaped(data["tallies"], list)
    )
    if any(t.target != target for t, _ in tallies):
        raise ValueError("a fold of another target")
    return TargetFold(
        target=target,
        tallies=tallies,
        shared={name: texts(data["shared"][name]) for name in SHARED},
        diffs=tuple(diff_from(item) for item in shaped(data["diffs"], list)),
        unchanged=tuple(
            (text(case_id), text(variant)) for case_id, variant in shaped(data["unchanged"], list)
        ),
        stale=tuple(
            (StaleUnit(target, text(v), text(c), texts(causes), text(problem)), texts(words))
            for v, c, causes, problem, words in shaped(data["stale"], list)
        ),
        attempts=whole(data["attempts"]),
        unsafe=whole(data["unsafe"]),
        problem_units=texts(data["problem_units"]),
    )
