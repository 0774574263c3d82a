"""`fcreplay diff`: one run's decisions against another run's, classed as the golden diff does.

The first run (A, before) is the baseline: its entries are built as `golden update`
builds golden entries (`store.golden_entries`) and kept in memory, no golden file is
read or written; the second run (B, after) is diffed against them by the golden diff
itself (`diff.diff_against`), so the classes, argument changes, evidence and every
output format are the same. What differs from a golden diff:

* targets pair by name, or across names with `pairs` ((target in A, target in B)),
  so two models or two adapters compare case by case and variant by variant;
* a prompt, contract, settings or adapter difference between the runs is what is
  being compared, so it never makes an entry `stale`: it is stated once, in the
  comparison. An entry is stale only when one of the runs could not replay it
  faithfully (request drift, no recording): that run did not test the model.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import fields
from pathlib import Path

from fcreplay.errors import InputError
from fcreplay.fingerprint import PARTS
from fcreplay.golden.compare import InputChange, RunComparison, RunSide
from fcreplay.golden.diff import GoldenDiff, diff_against
from fcreplay.golden.store import golden_entries
from fcreplay.record import AttemptRecord
from fcreplay.runmarks import RunEnd, RunScope
from fcreplay.stale import causes_of, staleness

_STAMP = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\d*Z")
"""The start of a run id (`runlog.new_run_id`): its UTC start time."""


def started_at(run_id: str) -> str | None:
    """When a run started, read from its id: `2025-01-02 10:00:00Z`; None for another id."""
    found = _STAMP.match(run_id)
    if found is None:
        return None
    year, month, day, hour, minute, second = found.groups()
    return f"{year}-{month}-{day} {hour}:{minute}:{second}Z"


def run_side(
    name: str, given: str, path: Path, records: Sequence[AttemptRecord], end: RunEnd | None
) -> RunSide:
    """One side of the comparison, from its log."""
    run_id = end.run_id if end is not None else records[0].run_id if records else path.stem
    models = {record.target: record.model for record in records}
    return RunSide(
        name=name,
        given=given,
        run_id=run_id,
        path=str(path),
        mode=end.mode if end is not None else None,
        started=started_at(run_id),
        state=end.state if end is not None else "no run-end record (killed, or still running)",
        attempts=len(records),
        models=tuple(models.items()),
    )


def diff_runs(
    before: Iterable[AttemptRecord],
    after: Iterable[AttemptRecord],
    *,
    sides: tuple[RunSide, RunSide],
    pairs: Sequence[tuple[str, str]] = (),
    scope: RunScope | None = None,
) -> GoldenDiff:
    """B's records (`after`) against the entries of A's (`before`), by decisions only.

    `pairs` compares a target of A with a target of B of another name; other targets
    pair by name. `scope` is B's (what it was asked to run): A's entries outside it are
    left out instead of reported `missing`. An unknown or twice-paired target is an
    InputError naming the run's log.
    """
    before, after = list(before), list(after)
    side_a, side_b = sides
    source = pair_targets(
        pairs, [r.target for r in before], [r.target for r in after], side_a, side_b
    )
    built = golden_entries(
        before,
        reason=f"run {side_a.run_id} (fcreplay diff)",
        recorded_at=(side_a.started or "").replace(" ", "T"),
    )
    baselines = {b: built[a] for b, a in source.items()}
    stale_baseline: dict[tuple[str, str, str], tuple[str, ...]] = {}
    for record in before:
        for b in (b for b, a in source.items() if a == record.target):
            key = (b, record.case_id, record.variant)
            stale_baseline[key] = tuple(
                dict.fromkeys(stale_baseline.get(key, ()) + (causes_of(record) or ()))
            )
    used = set(source.values())
    inputs, compared = input_changes(before, after, source)
    comparison = RunComparison(
        before=side_a,
        after=side_b,
        pairs=tuple((a, b) for b, a in source.items() if a != b),
        compared_units=compared,
        inputs=inputs,
        only_before=tuple(t for t in dict.fromkeys(r.target for r in before) if t not in used),
        only_after=tuple(t for t in dict.fromkeys(r.target for r in after) if t not in source),
    )
    return diff_against(
        after,
        baselines,
        scope=scope,
        stale_baseline={key: causes for key, causes in stale_baseline.items() if causes},
        stale=staleness([*after, *(r for r in before if r.target in used)], scope),
        comparison=comparison,
    )


def pair_targets(
    pairs: Sequence[tuple[str, str]],
    targets_a: Iterable[str],
    targets_b: Iterable[str],
    side_a: RunSide,
    side_b: RunSide,
) -> dict[str, str]:
    """Target of B -> the target of A it is compared with, in B's order; a target of B
    with no counterpart in A is left out (its entries are all `new`)."""
    known_a, known_b = list(dict.fromkeys(targets_a)), list(dict.fromkeys(targets_b))
    source: dict[str, str] = {}
    for a, b in pairs:
        for side, target, known in ((side_a, a, known_a), (side_b, b, known_b)):
            if target not in known:
                raise InputError.at(
                    side.path,
                    None,
                    f"--pair {a}={b}: run {side.name} has no target {target!r} "
                    f"(it ran {', '.join(known) or 'nothing'})",
                )
        if b in source:
            raise InputError.at(
                side_b.path,
                None,
                f"--pair {a}={b}: target {b!r} of run B is already paired with {source[b]!r}",
            )
        source[b] = a
    return {b: source.get(b, b) for b in known_b if b in source or b in known_a}


def input_changes(
    before: Sequence[AttemptRecord], after: Sequence[AttemptRecord], source: dict[str, str]
) -> tuple[tuple[InputChange, ...], int]:
    """What the units present in both runs were built from differently, and how many
    such units there are; each unit is read from its first attempt."""
    first_a: dict[tuple[str, str, str], AttemptRecord] = {}
    for record in before:
        first_a.setdefault((record.target, record.variant, record.case_id), record)
    first_b: dict[tuple[str, str, str], AttemptRecord] = {}
    for record in after:
        first_b.setdefault((record.target, record.variant, record.case_id), record)
    units: Counter[str] = Counter()
    details: dict[str, set[str | None]] = {}
    compared = 0
    for (target, variant, case_id), b in first_b.items():
        a = first_a.get((source.get(target, ""), variant, case_id))
        if a is None:
            continue
        compared += 1
        for part, detail in _differences(a, b).items():
            units[part] += 1
            details.setdefault(part, set()).add(detail)
    order = [*PARTS, "fcreplay"]
    changes = []
    for part in sorted(units, key=order.index):
        (only, *others) = details[part]
        changes.append(InputChange(part, units[part], None if others else only))
    return tuple(changes), compared


def _differences(a: AttemptRecord, b: AttemptRecord) -> dict[str, str | None]:
    """Part -> what it was and became, for each input of one unit that differs."""
    if a.fingerprint is not None and b.fingerprint is not None:
        parts = b.fingerprint.changed_since(a.fingerprint)
    else:  # a version-1 log: the hashes and versions the record carries
        legacy = {
            "contract": (a.contract_hash, b.contract_hash),
            "prompt": (a.prompt_version, b.prompt_version),
            "settings": ((a.model, a.request_settings), (b.model, b.request_settings)),
            "adapter": ((a.adapter, a.adapter_version), (b.adapter, b.adapter_version)),
            "case": (a.cases_version, b.cases_version),
        }
        parts = tuple(part for part in PARTS if part in legacy and len(set(legacy[part])) > 1)
    found = {part: _detail(part, a, b) for part in parts}
    if a.fcreplay_version != b.fcreplay_version:
        found["fcreplay"] = f"{a.fcreplay_version} → {b.fcreplay_version}"
    return found


def _detail(part: str, a: AttemptRecord, b: AttemptRecord) -> str | None:
    if part == "prompt":
        versions = (a.prompt_version or "unversioned", b.prompt_version or "unversioned")
        if versions[0] == versions[1]:
            return f"prompt_version {versions[0]} on both sides"
        return f"prompt_version {versions[0]} → {versions[1]}"
    if part == "settings":
        if a.model != b.model:
            return f"model {a.model} → {b.model}"
        moved = [
            f"{item.name} {getattr(a.request_settings, item.name)} → "
            f"{getattr(b.request_settings, item.name)}"
            for item in fields(a.request_settings)
            if getattr(a.request_settings, item.name) != getattr(b.request_settings, item.name)
        ]
        return ", ".join(moved) or None
    if part == "adapter":
        if a.fingerprint is not None and b.fingerprint is not None:
            return f"{a.fingerprint.adapter} → {b.fingerprint.adapter}"
        return f"{a.adapter} {a.adapter_version} → {b.adapter} {b.adapter_version}"
    if part == "contract":
        return f"{a.contract_hash[:12]} → {b.contract_hash[:12]}"
    if part == "case" and a.cases_version != b.cases_version:
        return f"cases_version {a.cases_version} → {b.cases_version}"
    return None
