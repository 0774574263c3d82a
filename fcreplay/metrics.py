"""Quality metrics per target × variant, recomputed from the attempt records of a run log alone.

Every figure comes from record fields (`verdict`, `signature`, `steps`, `findings`);
no case file, contract or cassette is read. Formulas, over the *evaluated* attempts
of one target × variant (verdict not "error" and a first-turn decision recorded):

* decision_accuracy = attempts whose first-turn decision is right / evaluated.
  Right: it calls a tool exactly when the case expects a call, and otherwise its
  kind is the expected one (no `text_mismatch` at `/kind`, not an `invalid` turn).
* tool_selection_accuracy = attempts with the right tool names / evaluated attempts
  whose case expects a call. Right names: no first-turn `wrong_tool`,
  `unknown_tool`, `missing_call` or `unexpected_call`.
* raw_schema_validity = calls whose `arguments` status is `raw_valid` / calls, over
  every call of every turn (the `arguments` entries of the steps).
* exact_argument_accuracy = first-turn calls with no `argument_mismatch` or
  `invalid_json` / first-turn calls to a right tool (no `wrong_tool`,
  `unknown_tool` or `unexpected_call` at that call) in attempts expecting a call.
  A case that names no expected arguments cannot mismatch, so its calls count as exact.
* unsafe_call_rate = attempts with any `unsafe_call` finding / evaluated.
* error_recovery_accuracy = attempts with no `false_success`,
  `repeated_failed_call`, `step_limit` or then-turn `text_mismatch` after the
  first failed tool result / attempts where a tool returned an error.
* consistency = cases whose evaluated attempts share one signature / cases with at
  least two evaluated attempts.

Per target, positional_sensitivity = cases whose set of signatures under
`reversed` differs from the set under `auto` / cases evaluated in both.

A metric without denominator is None. Attempts with verdict "error" (transport or
provider error, missing recording) are counted in `transport_errors` and left out of
every denominator, as are attempts that drifted before their first decision. In the
`no_tools` variant no tool is declared, so a parsed call is a normalizer bug and is
counted in `normalizer_bugs`.

Whether a case expects a call is read from the record's `expect` block (the
expectation the first turn was checked against in its variant).

Per tag (`tally_by_tag`), every figure is computed the same way over the attempts whose
record carries that tag; a record with several tags counts under each.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields

from fcreplay.canonical import canonical_json, sorted_json
from fcreplay.decision import Signature
from fcreplay.finding import Finding
from fcreplay.quickinit import quick
from fcreplay.record import AttemptRecord, StepRecord

METRICS = (
    "decision_accuracy",
    "tool_selection_accuracy",
    "raw_schema_validity",
    "exact_argument_accuracy",
    "unsafe_call_rate",
    "error_recovery_accuracy",
    "consistency",
)
"""Metric names, in report order (the seed's six plus consistency)."""

_NOT_FIRST_TURN = frozenset({"repeated_failed_call", "step_limit", "request_drift"})
_SELECTION = frozenset({"wrong_tool", "unknown_tool", "missing_call", "unexpected_call"})
_OTHER_TOOL = frozenset({"wrong_tool", "unknown_tool", "unexpected_call"})
_NOT_EXACT = frozenset({"argument_mismatch", "invalid_json"})
_RECOVERY = frozenset({"false_success", "repeated_failed_call", "step_limit"})
_NO_CODES: frozenset[str] = frozenset()
_CALL_INDEX = re.compile(r"^/calls/(\d+)(?:/|$)")


@quick
@dataclass(frozen=True)
class Assessment:
    """What one attempt record contributes to the metrics."""

    evaluated: bool
    transport_error: bool
    drift: bool
    signature: str | None
    """Canonical JSON of the first-turn signature; None without a first decision."""
    expects_call: bool = False
    decision_right: bool = False
    tool_right: bool | None = None
    calls: int = 0
    raw_valid_calls: int = 0
    exact_calls: int = 0
    exact_ok: int = 0
    unsafe: bool = False
    recovered: bool | None = None
    """None when no tool returned an error in this attempt."""
    normalizer_bug: bool = False


def assess(record: AttemptRecord) -> Assessment:
    """Read one attempt record; see the module docstring for each rule."""
    findings, steps = record.findings, record.steps
    drift = record.drift is not None
    transport_error = record.verdict == "error"
    signature = None if record.signature is None else signature_key(record.signature)
    if transport_error or record.signature is None:
        return Assessment(False, transport_error, drift, signature)
    kind, names, _ = record.signature
    first = [f for f in findings if _first_turn(f, steps)]
    codes = {f.code for f in first}
    made_call = bool(names)
    expects = record.expect.kind == "tool_call"
    decision_right = expects == made_call and (
        expects or (kind != "invalid" and not _kind_mismatch(first))
    )
    exact_calls = exact_ok = 0
    if expects:
        per_call: dict[int, set[str]] = {}
        for finding in first:
            match = _CALL_INDEX.match(finding.path)
            if match:
                per_call.setdefault(int(match.group(1)), set()).add(finding.code)
        for index in range(len(names)):
            call_codes = per_call.get(index, _NO_CODES)
            if not call_codes & _OTHER_TOOL:
                exact_calls += 1
                exact_ok += not call_codes & _NOT_EXACT
    calls = raw_valid = 0
    for step in steps:
        for check in step.arguments:
            calls += 1
            raw_valid += check.status == "raw_valid"
    return Assessment(
        evaluated=True,
        transport_error=False,
        drift=drift,
        signature=signature,
        expects_call=expects,
        decision_right=decision_right,
        tool_right=not codes & _SELECTION if expects else None,
        calls=calls,
        raw_valid_calls=raw_valid,
        exact_calls=exact_calls,
        exact_ok=exact_ok,
        unsafe=bool(findings) and any(f.code == "unsafe_call" for f in findings),
        recovered=_recovered(findings, steps),
        normalizer_bug=record.variant == "no_tools" and any(s.decision.calls for s in steps),
    )


def signature_key(signature: Signature) -> str:
    """The canonical JSON of a first-turn signature (`canonical_json`)."""
    try:
        return _signature_key(signature)
    except TypeError:  # not hashable: not made by `decision.signature`
        return canonical_json(signature)


@functools.lru_cache(maxsize=1024)
def _signature_key(signature: Signature) -> str:
    # A unit's repetitions mostly give one signature (the same object: `_one_of_equals`).
    kind, names, arguments = signature
    if type(kind) is str and type(arguments) is str and all(type(n) is str for n in names):
        return sorted_json([kind, list(names), arguments])  # strings: nothing to normalize
    return canonical_json(signature)


def _first_turn(finding: Finding, steps: Sequence[StepRecord]) -> bool:
    """Whether a finding comes from the check of the first-turn (phase) decision.

    That check is recorded at step 0 or at a step whose turn made calls; the
    then-check is recorded at a later turn without calls.
    """
    if finding.code in _NOT_FIRST_TURN:
        return False
    step = finding.step or 0
    return step == 0 or (step < len(steps) and bool(steps[step].decision.calls))


def _then_turn(finding: Finding, steps: Sequence[StepRecord]) -> bool:
    step = finding.step or 0
    return 0 < step < len(steps) and not steps[step].decision.calls


def _kind_mismatch(first: list[Finding]) -> bool:
    return any(f.code == "text_mismatch" and f.path == "/kind" for f in first)


def _recovered(findings: Sequence[Finding], steps: Sequence[StepRecord]) -> bool | None:
    failed = [step.step for step in steps if any(result.is_error for result in step.tool_results)]
    if not failed:
        return None
    after = [f for f in findings if (f.step or 0) > failed[0]]
    return not any(
        f.code in _RECOVERY or (f.code == "text_mismatch" and _then_turn(f, steps)) for f in after
    )


@dataclass
class Tally:
    """Counts for one target × variant; `metrics()` turns them into rates."""

    target: str
    variant: str
    adapter: str | None = None
    model: str | None = None
    models_reported: set[str] = field(default_factory=set)
    attempted: int = 0
    transport_errors: int = 0
    request_drift: int = 0
    evaluated: int = 0
    decision_right: int = 0
    expects_call: int = 0
    tool_right: int = 0
    calls: int = 0
    raw_valid_calls: int = 0
    exact_calls: int = 0
    exact_ok: int = 0
    unsafe: int = 0
    tool_errors: int = 0
    recovered: int = 0
    normalizer_bugs: int = 0
    signatures: dict[str, list[str]] = field(default_factory=dict)
    """case_id -> the signatures of its evaluated attempts."""
    cases: set[str] = field(default_factory=set)

    def add(self, record: AttemptRecord) -> None:
        """Count one attempt record."""
        seen = assess(record)
        self.adapter = self.adapter or record.adapter
        self.model = self.model or record.model
        if record.model_reported:
            self.models_reported.add(record.model_reported)
        self.attempted += 1
        self.cases.add(record.case_id)
        self.transport_errors += seen.transport_error
        self.request_drift += seen.drift
        self.normalizer_bugs += seen.normalizer_bug
        if not seen.evaluated:
            return
        assert seen.signature is not None
        self.signatures.setdefault(record.case_id, []).append(seen.signature)
        self.evaluated += 1
        self.decision_right += seen.decision_right
        self.expects_call += seen.expects_call
        self.tool_right += bool(seen.tool_right)
        self.calls += seen.calls
        self.raw_valid_calls += seen.raw_valid_calls
        self.exact_calls += seen.exact_calls
        self.exact_ok += seen.exact_ok
        self.unsafe += seen.unsafe
        self.tool_errors += seen.recovered is not None
        self.recovered += bool(seen.recovered)

    def merge(self, other: Tally) -> None:
        """Add `other`'s counts: the same target × variant over later records."""
        self.adapter = self.adapter or other.adapter
        self.model = self.model or other.model
        self.models_reported |= other.models_reported
        self.cases |= other.cases
        for case_id, signatures in other.signatures.items():
            self.signatures.setdefault(case_id, []).extend(signatures)
        mine, theirs = vars(self), vars(other)
        for name in _COUNTED:  # the serial tail merges one tally per unit
            mine[name] += theirs[name]

    def metrics(self) -> dict[str, float | None]:
        """Each metric of METRICS, None where it has no denominator."""
        repeated = [s for s in self.signatures.values() if len(s) >= 2]
        return {
            "decision_accuracy": _rate(self.decision_right, self.evaluated),
            "tool_selection_accuracy": _rate(self.tool_right, self.expects_call),
            "raw_schema_validity": _rate(self.raw_valid_calls, self.calls),
            "exact_argument_accuracy": _rate(self.exact_ok, self.exact_calls),
            "unsafe_call_rate": _rate(self.unsafe, self.evaluated),
            "error_recovery_accuracy": _rate(self.recovered, self.tool_errors),
            "consistency": _rate(sum(len(set(s)) == 1 for s in repeated), len(repeated)),
        }

    def counts(self) -> dict[str, int]:
        """The numerators' denominators, for readers who want the raw numbers."""
        return {
            "evaluated": self.evaluated,
            "expecting_call": self.expects_call,
            "calls": self.calls,
            "first_turn_calls_right_tool": self.exact_calls,
            "with_tool_error": self.tool_errors,
            "repeated_cases": sum(len(s) >= 2 for s in self.signatures.values()),
        }


_COUNTED = tuple(f.name for f in fields(Tally) if f.type == "int")
"""The tally's counts (`merge` adds them up)."""


def _rate(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else round(numerator / denominator, 4)


def tally(records: Iterable[AttemptRecord]) -> dict[tuple[str, str], Tally]:
    """Tallies keyed by (target, variant), in the order the records first show them."""
    tallies: dict[tuple[str, str], Tally] = {}
    for record in records:
        key = (record.target, record.variant)
        if key not in tallies:
            tallies[key] = Tally(*key)
        tallies[key].add(record)
    return tallies


def tally_by_tag(records: Iterable[AttemptRecord]) -> dict[tuple[str, str, str], Tally]:
    """Tallies keyed by (tag, target, variant), tags sorted, then in record order."""
    tallies: dict[tuple[str, str, str], Tally] = {}
    for record in records:
        for tag in record.tags:
            key = (tag, record.target, record.variant)
            if key not in tallies:
                tallies[key] = Tally(record.target, record.variant)
            tallies[key].add(record)
    return dict(sorted(tallies.items(), key=lambda item: item[0][0]))


def positional_sensitivity(tallies: dict[tuple[str, str], Tally]) -> dict[str, float | None]:
    """Per target: share of cases whose signatures under `reversed` differ from `auto`."""
    result: dict[str, float | None] = {}
    for target in dict.fromkeys(t for t, _ in tallies):
        auto, reverse = tallies.get((target, "auto")), tallies.get((target, "reversed"))
        if auto is None or reverse is None:
            result[target] = None
            continue
        both = sorted(set(auto.signatures) & set(reverse.signatures))
        differ = sum(set(auto.signatures[c]) != set(reverse.signatures[c]) for c in both)
        result[target] = _rate(differ, len(both))
    return result
