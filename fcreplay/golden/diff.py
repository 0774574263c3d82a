"""Golden diff: each case × variant of a run against its golden entry, classed for review.

Classes, tried in this order for an entry present on both sides that differs:

* stale       the run could not replay the entry faithfully (request drift or no
              recording): its cassette is out of date, so the model was not tested;
              the cause (which input changed) and the command that re-records it
              come with it (see `fcreplay.stale`);
* regression  the golden verdict was pass, the run's is not;
* fix         the golden verdict was not pass, the run's is;
* changed     same signatures but another verdict or other finding codes;
* flaky       the golden was consistent (one signature) and the run is not, or the
              two share a signature but its distribution over repetitions moved;
* changed     otherwise: the run decided something else, with the same verdict.

And for an entry on one side only: `new` (the run has it, the golden does not:
record it with `fcreplay golden update`) and `missing` (the golden has it, the run
produced no attempt for it, within what the run was asked to run: a run of one
case or one target leaves the other entries alone). Argument-level differences
come from `fcreplay.structdiff`, computed only for entries whose signatures differ;
each finding code the run added comes with its evidence (`fcreplay.evidence`).

`diff_against` compares with any baseline per target: `diff_run` gives it the golden
files, `fcreplay diff` another run's entries (`fcreplay.golden.rundiff`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcreplay.evidence import Evidence, first_evidence
from fcreplay.golden.compare import RunComparison
from fcreplay.golden.store import EntryKey, GoldenEntry, SignatureCount, load_golden, observe
from fcreplay.record import AttemptRecord
from fcreplay.runmarks import RunScope
from fcreplay.stale import Staleness, causes_of, staleness
from fcreplay.structdiff import Difference, differences

CLASSES = ("regression", "fix", "flaky", "changed", "stale", "new", "missing")
"""Every class, in the order a reviewer reads them."""
MAX_CHANGES = 20
"""Argument differences kept per entry; a rewrite of everything says little more."""


@dataclass(frozen=True)
class EntryDiff:
    """One case × variant whose run result differs from its golden entry."""

    target: str
    case_id: str
    variant: str
    kind: str
    """One of CLASSES."""
    golden: GoldenEntry | None
    now: GoldenEntry | None
    changes: tuple[Difference, ...] = ()
    """Differences between representative decisions: paths like /calls/0/arguments/x."""
    causes: tuple[str, ...] = ()
    """For `stale`: which inputs changed since the recording (see `fcreplay.stale`)."""
    evidence: tuple[Evidence, ...] = ()
    """The first finding of each code the run added, with what shows it."""

    @property
    def label(self) -> str:
        """target/variant/case"""
        return f"{self.target}/{self.variant}/{self.case_id}"

    def findings_change(self) -> tuple[list[str], list[str]]:
        """Finding codes the run added and dropped, relative to the golden."""
        before = set(self.golden.findings) if self.golden else set()
        after = set(self.now.findings) if self.now else set()
        return sorted(after - before), sorted(before - after)

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        added, dropped = self.findings_change()
        return {
            "target": self.target,
            "case_id": self.case_id,
            "variant": self.variant,
            "class": self.kind,
            "golden": self.golden.to_json() if self.golden else None,
            "now": self.now.to_json() if self.now else None,
            "findings_added": added,
            "findings_dropped": dropped,
            "changes": [change.to_json() for change in self.changes],
            "causes": list(self.causes),
            "evidence": [item.to_json() for item in self.evidence],
        }


@dataclass(frozen=True)
class GoldenDiff:
    """The golden diff of a run: the differing entries and those that match."""

    run_id: str | None
    diffs: tuple[EntryDiff, ...]
    unchanged: tuple[tuple[str, str, str], ...] = field(default=())
    """(target, case_id, variant) of every entry equal to its golden."""
    staleness: Staleness = field(default_factory=lambda: Staleness((), (), ()))
    """The run's stale units, their causes and the commands that re-record them."""
    comparison: RunComparison | None = None
    """For `fcreplay diff`: the two runs compared (the baseline is the first's entries);
    None for a diff against the golden files."""

    def counts(self) -> dict[str, int]:
        """Entries per class, every class present."""
        counts = dict.fromkeys(CLASSES, 0)
        for diff in self.diffs:
            counts[diff.kind] += 1
        return counts

    @property
    def clean(self) -> bool:
        """Whether every entry matches its golden."""
        return not self.diffs

    def summary(self) -> str:
        """One line: the count of each class and of unchanged entries."""
        counts = self.counts()
        shown = ", ".join(f"{counts[name]} {name}" for name in CLASSES)
        return f"{shown}; {len(self.unchanged)} unchanged"

    def to_json(self) -> dict[str, Any]:
        """The JSON form; a run diff adds `comparison` (the `golden` side is the first run's)."""
        data: dict[str, Any] = {
            "run_id": self.run_id,
            "counts": {**self.counts(), "unchanged": len(self.unchanged)},
            "diffs": [diff.to_json() for diff in self.diffs],
            "stale": {
                "units": len(self.staleness.units),
                "causes": dict(self.staleness.causes),
                "record_commands": list(self.staleness.commands),
            },
        }
        if self.comparison is not None:
            data["comparison"] = self.comparison.to_json()
        return data


def classify(
    golden: GoldenEntry | None, now: GoldenEntry | None, *, stale: bool = False
) -> str | None:
    """The class of a golden/run pair, or None when they match; `stale` when the run
    could not replay the entry faithfully."""
    if golden is None:
        return "new"
    if now is None:
        return "missing"
    if stale:
        return "stale"
    if golden == now:
        return None
    if golden.verdict == "pass" and now.verdict != "pass":
        return "regression"
    if golden.verdict != "pass" and now.verdict == "pass":
        return "fix"
    before, after = golden.signature_keys(), now.signature_keys()
    if before.keys() == after.keys() and before != after:
        return "flaky"
    if before == after:
        return "changed"
    if golden.consistent and not now.consistent:
        return "flaky"
    return "flaky" if before.keys() & after.keys() else "changed"


def argument_changes(golden: GoldenEntry, now: GoldenEntry) -> tuple[Difference, ...]:
    """Differences between each new signature and its closest golden one.

    The closest is the golden signature with the same kind and call names, else
    the golden's most frequent one.
    """
    known = golden.signature_keys()
    found: list[Difference] = []
    for item in now.signatures:
        if item.key in known or not golden.signatures:
            continue
        base = _counterpart(golden.signatures, item)
        found += differences(base.decision(), item.decision())
    unique = {(d.path, repr(d.before), repr(d.after)): d for d in found}
    return tuple(list(unique.values())[:MAX_CHANGES])


def _counterpart(candidates: Sequence[SignatureCount], item: SignatureCount) -> SignatureCount:
    head = (item.signature or [None, None])[:2]
    for candidate in candidates:
        if (candidate.signature or [None, None])[:2] == head:
            return candidate
    return candidates[0]


Baselines = Mapping[str, Mapping[EntryKey, GoldenEntry]]
"""Per target: the entries a run is compared with (golden files, or another run's)."""
UnitCauses = Mapping[tuple[str, str, str], tuple[str, ...]]
"""(target, case_id, variant) -> why the baseline side of that entry is stale."""


def diff_run(
    records: Iterable[AttemptRecord],
    golden_dir: Path,
    *,
    run_id: str | None = None,
    scope: RunScope | None = None,
) -> GoldenDiff:
    """Compare a run's records with the golden files of the targets it ran.

    With the run's `scope`, golden entries outside what it was asked to run (other
    cases, other variants) are left out instead of reported `missing`.
    """
    records = list(records)
    baselines: dict[str, dict[EntryKey, GoldenEntry]] = {}
    for target in dict.fromkeys(record.target for record in records):
        golden = load_golden(golden_dir, target)
        baselines[target] = golden.entries if golden else {}
    return diff_against(records, baselines, run_id=run_id, scope=scope)


def diff_against(
    records: Iterable[AttemptRecord],
    baselines: Baselines,
    *,
    run_id: str | None = None,
    scope: RunScope | None = None,
    stale_baseline: UnitCauses | None = None,
    stale: Staleness | None = None,
    comparison: RunComparison | None = None,
) -> GoldenDiff:
    """Compare a run's records with a baseline per target it ran (see `diff_run`).

    `stale_baseline` names the entries whose baseline side could not be trusted either
    (another run's stale attempts), `stale` replaces the run's own staleness in the
    result, and `comparison` says which two runs `fcreplay diff` compared.
    """
    records = list(records)
    observed = observe(records)
    stale_units = stale if stale is not None else staleness(records, scope)
    grouped: dict[tuple[str, str, str], list[AttemptRecord]] = {}
    for record in records:
        grouped.setdefault((record.target, record.case_id, record.variant), []).append(record)
    diffs: list[EntryDiff] = []
    unchanged: list[tuple[str, str, str]] = []
    for target, seen in observed.items():
        run_id = run_id or seen.run_id
        baseline = baselines.get(target, {})
        wanted = {k: entry for k, entry in baseline.items() if in_scope(k, scope, target)}
        for key in sorted(set(seen.entries) | set(wanted)):
            before, after = wanted.get(key), seen.entries.get(key)
            group = grouped.get((target, *key), [])
            found = [c for record in group for c in causes_of(record) or ()]
            found += (stale_baseline or {}).get((target, *key), ())
            causes = tuple(dict.fromkeys(found))
            kind = classify(before, after, stale=bool(causes))
            if kind is None:
                unchanged.append((target, *key))
                continue
            changes: tuple[Difference, ...] = ()
            if before is not None and after is not None and kind != "stale":
                changes = argument_changes(before, after)
            evidence: tuple[Evidence, ...] = ()
            if after is not None and kind != "stale":
                added = sorted(set(after.findings) - set(before.findings if before else ()))
                evidence = tuple(first_evidence(group, added))
            diffs.append(
                EntryDiff(target, key[0], key[1], kind, before, after, changes, causes, evidence)
            )
    return GoldenDiff(run_id, tuple(diffs), tuple(unchanged), stale_units, comparison)


def in_scope(key: EntryKey, scope: RunScope | None, target: str | None = None) -> bool:
    """Whether a golden entry (of `target`, when given) is among what a run of `scope`
    was asked to run; a shard's run holds only its own units."""
    case_id, variant = key
    if scope is None:
        return True
    if target is not None and scope.shard and not scope.shard.owns(target, variant, case_id):
        return False
    return (not scope.case_ids or case_id in scope.case_ids) and (
        not scope.variants or variant in scope.variants
    )
