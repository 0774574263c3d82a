"""What every golden-diff format says alike: class titles, folded places, evidence lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from shlex import quote

from fcreplay.evidence import Evidence
from fcreplay.golden.compare import InputChange, RunComparison, RunSide
from fcreplay.golden.diff import EntryDiff, GoldenDiff
from fcreplay.golden.store import GoldenEntry
from fcreplay.schemadiff.classes import show_value
from fcreplay.stale import describe

UPDATE_HINT = "accept with `fcreplay golden update --reason TEXT` (add --case ID to pick entries)"

TITLES = {
    "regression": "Regressions",
    "fix": "Fixes",
    "flaky": "Flaky",
    "changed": "Changed decisions",
    "stale": "Stale recordings",
    "new": "New entries",
    "missing": "Missing entries",
}
"""Section titles, one per class."""

MEANING = {
    "regression": "passed in the golden, fail now",
    "fix": "failed in the golden, pass now: update the golden so the next regression shows",
    "flaky": "the spread of decisions over repetitions moved",
    "changed": "another decision with the same verdict",
    "stale": "the recordings no longer match what the suite sends, so these entries were "
    "not compared; re-record them, then diff again",
    "new": "no golden entry yet",
    "missing": "in the golden, but the run has no attempt for it",
}
"""What each class means for a reviewer, in one sentence."""

RUN_MEANING = {
    "regression": "passed in run A, failed in run B",
    "fix": "failed in run A, passed in run B",
    "flaky": "the spread of decisions over repetitions moved",
    "changed": "another decision with the same verdict",
    "stale": "one of the runs could not replay these entries from its recordings (request "
    "drift or no recording), so it did not test the model and they were not compared; "
    "re-record them, run again, then diff again",
    "new": "in run B only",
    "missing": "in run A, but run B has no attempt for it",
}
"""What each class means in a diff of two runs (`fcreplay diff`)."""


@dataclass(frozen=True)
class Words:
    """How a diff names its two sides: a golden diff's, or a diff of two runs'."""

    title: str
    before: str
    after: str
    meaning: Mapping[str, str]
    hint: str | None
    """How to accept the differences, when there is a way."""
    new_note: str
    missing_note: str
    again: str
    """The command that writes the whole diff as Markdown."""


def words(diff: GoldenDiff) -> Words:
    """The words of this diff's kind."""
    compared = diff.comparison
    if compared is None:
        return Words(
            title="golden diff",
            before="golden",
            after="now",
            meaning=MEANING,
            hint=UPDATE_HINT,
            new_note="no golden entry yet",
            missing_note="the run has no attempt for this golden entry",
            again="fcreplay golden diff"
            + (f" --run {diff.run_id}" if diff.run_id else "")
            + " --format markdown --full-output FILE",
        )
    pairs = "".join(f" --pair {quote(f'{a}={b}')}" for a, b in compared.pairs)
    return Words(
        title="run diff",
        before="A",
        after="B",
        meaning=RUN_MEANING,
        hint=None,
        new_note="only in run B",
        missing_note="run B has no attempt for it",
        again=f"fcreplay diff {quote(compared.before.given)} {quote(compared.after.given)}"
        f"{pairs} --format markdown --full-output FILE",
    )


def comparison_lines(compared: RunComparison) -> list[str]:
    """What a run diff compared, one fact a line: the two runs, the pairs, the inputs."""
    lines = [_side_line(compared.before, "before"), _side_line(compared.after, "after")]
    if compared.pairs:
        shown = ", ".join(f"{a} of A with {b} of B" for a, b in compared.pairs)
        lines.append(f"paired targets: {shown} (entries are named by B's target)")
    if compared.inputs:
        shown = "; ".join(_input_text(c, compared.compared_units) for c in compared.inputs)
        lines.append(
            f"inputs that differ: {shown}; that is what is compared, so entries are "
            "classed by their decisions, never stale for it"
        )
    else:
        lines.append(f"inputs that differ: none in the {compared.compared_units} units compared")
    if compared.only_before:
        lines.append(
            f"not compared: {', '.join(compared.only_before)} of A (no target of B is "
            "compared with it; pair one with --pair TARGET_A=TARGET_B)"
        )
    if compared.only_after:
        lines.append(f"only in B: {', '.join(compared.only_after)} (every entry new)")
    return lines


def _side_line(side: RunSide, role: str) -> str:
    facts = [side.mode or "mode unknown"]
    if side.started:
        facts.append(f"started {side.started}")
    facts.append(side.state)
    models = ", ".join(f"{target} ({model})" for target, model in side.models)
    return f"{side.name} ({role}): run {side.run_id} — {', '.join(facts)}; targets {models}"


def _input_text(change: InputChange, compared: int) -> str:
    units = f"all {compared}" if change.units == compared else f"{change.units} of {compared}"
    detail = f", {change.detail}" if change.detail else ""
    return f"{change.part} ({units} units{detail})"


def side(entry: GoldenEntry | None) -> str:
    """One side of a transition, in brief."""
    return entry.summary() if entry is not None else "(none)"


def transition(diff: EntryDiff) -> str:
    """`golden -> now` of one entry."""
    return f"{side(diff.golden)} → {side(diff.now)}"


def fold(entries: Sequence[EntryDiff]) -> str:
    """Where a case's entries are, folded: `auto, reversed × sim-a, sim-b; forced × sim-a`."""
    variants: dict[str, list[str]] = {}
    for entry in entries:
        variants.setdefault(entry.target, []).append(entry.variant)
    groups: dict[tuple[str, ...], list[str]] = {}
    for target, names in variants.items():
        groups.setdefault(tuple(dict.fromkeys(names)), []).append(target)
    return "; ".join(f"{', '.join(v)} × {', '.join(t)}" for v, t in groups.items())


def by_case(entries: Sequence[EntryDiff]) -> dict[str, list[EntryDiff]]:
    """Entries grouped per case, cases in first-seen order."""
    grouped: dict[str, list[EntryDiff]] = {}
    for entry in entries:
        grouped.setdefault(entry.case_id, []).append(entry)
    return grouped


def of_class(diff: GoldenDiff, kind: str) -> list[EntryDiff]:
    """The diff's entries of one class."""
    return [entry for entry in diff.diffs if entry.kind == kind]


def findings_text(entries: Sequence[EntryDiff]) -> str:
    """Finding codes added (+) and dropped (−) over some entries."""
    added = sorted({code for e in entries for code in e.findings_change()[0]})
    dropped = sorted({code for e in entries for code in e.findings_change()[1]})
    return " ".join([f"+{c}" for c in added] + [f"−{c}" for c in dropped])


def evidence_line(item: Evidence, limit: int = 80) -> str:
    """One finding with its evidence, in plain text."""
    parts = [f"{item.code} at {item.where}: {item.message}"]
    if item.excerpt is not None:
        parts.append(f"model said: «{item.excerpt}»")
    if item.arguments is not None:
        parts.append(f"call: {_cut(item.arguments, limit * 2)}")
    elif item.excerpt is None and item.actual is not None:
        shown = show_value(item.actual, limit)
        parts.append(f"expected {show_value(item.expected, limit)}, got {shown}")
    if item.cassette:
        parts.append(f"cassette {item.cassette}")
    return " — ".join(parts)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stale_causes(diff: GoldenDiff) -> list[tuple[str, int]]:
    """The causes of the stale entries in words, with counts."""
    counts: dict[str, int] = {}
    for entry in of_class(diff, "stale"):
        for cause in entry.causes:
            words = _cause_words(diff, cause)
            counts[words] = counts.get(words, 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])


def _cause_words(diff: GoldenDiff, cause: str) -> str:
    # The run's staleness words the prompt cause with its prompt_version; reuse them.
    for text, _ in diff.staleness.causes:
        if cause == "prompt" and text.startswith("the system prompt"):
            return text
    return describe(cause)


def record_command(diff: GoldenDiff) -> str:
    """The command(s) that re-record the run's stale units."""
    return " && ".join(diff.staleness.commands) or "fcreplay record"


def provenance_line(entry: EntryDiff, comparison: RunComparison | None = None) -> str:
    """Where the golden side came from (run A's, in a run diff)."""
    provenance = entry.golden.provenance if entry.golden else None
    if comparison is not None:
        target = next((a for a, b in comparison.pairs if b == entry.target), entry.target)
        model = f", model {provenance.model}" if provenance and provenance.model else ""
        return f"A: {target} in run {comparison.before.run_id}{model}"
    if provenance is None:
        return "golden: no provenance"
    return (
        f"golden from run {provenance.run_id} ({provenance.recorded_at}, model "
        f"{provenance.model_reported or provenance.model}): {provenance.reason}"
    )
