"""One attempt: hold the conversation, judge its phases turn by turn, and make its record."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.canonical import canonical_json
from fcreplay.decision import Decision, DecisionKind, Signature, signature
from fcreplay.engine.conversation import Conversation, converse
from fcreplay.engine.drift import drift_summary, labelled_changes
from fcreplay.engine.plan import Unit, unit_settings
from fcreplay.engine.players import Mismatch, Player
from fcreplay.engine.sources import record_hint
from fcreplay.finding import Finding
from fcreplay.fingerprint import Fingerprint
from fcreplay.inputs.suite import Suite
from fcreplay.judge.expectations import judge_expectation
from fcreplay.judge.history import check_history, history_finding, history_of
from fcreplay.judge.repair import classify_arguments
from fcreplay.record import (
    AttemptError,
    AttemptRecord,
    ExpectedOutline,
    SentSettings,
    StepRecord,
    Verdict,
)
from fcreplay.structdiff import Difference
from fcreplay.version import __version__

_T = TypeVar("_T")


def run_attempt(
    suite: Suite,
    unit: Unit,
    attempt: int,
    player: Player,
    *,
    adapter: ClientAdapter,
    run_id: str,
    max_retries: int,
    clock: Callable[[], float] = time.monotonic,
    fingerprint: Fingerprint | None = None,
    recorded_with: Fingerprint | None = None,
    cassette: str | None = None,
    on_retry: Callable[[str], None] | None = None,
) -> AttemptRecord:
    """Run one attempt of a unit and return its run-log record (never raises for findings)."""
    started = clock()
    conversation = converse(
        suite, unit, player, adapter=adapter, max_retries=max_retries, on_retry=on_retry
    )
    judged = _judge(suite, unit, conversation, adapter)
    error: AttemptError | None = None
    ended_by = conversation.ended_by
    if isinstance(ended_by, Mismatch):
        # SchemaChange is a finding about the adapter, not a failure to get an answer.
        changes = labelled_changes(ended_by, suite=suite, unit=unit, adapter=adapter)
        judged.findings.append(_drift(ended_by, changes, unit, step=len(judged.steps)))
    else:
        error = ended_by
    verdict: Verdict = "error" if error else ("fail" if judged.findings else "pass")
    sent, outline = _unit_outline(suite, unit, conversation.max_steps)
    return AttemptRecord(
        run_id=run_id,
        target=unit.target.name,
        adapter=adapter.NAME,
        model=unit.target.model,
        model_reported=_shared(conversation.model_reported),
        variant=unit.variant,
        case_id=unit.case.id,
        attempt=attempt,
        elapsed_ms=round((clock() - started) * 1000),
        request_settings=sent,
        request_sha256=conversation.first_request_sha256,
        adapter_version=adapter.VERSION,
        prompt_version=suite.config.prompt_version,
        contract_hash=suite.contract.contract_hash,
        cases_version=suite.cases_version,
        fcreplay_version=__version__,
        expect=outline,
        verdict=verdict,
        signature=_one_signature(signature(judged.first)) if judged.first else None,
        steps=tuple(judged.steps),
        findings=tuple(judged.findings),
        transport_error=error,
        tags=unit.case.tags,
        fingerprint=fingerprint,
        recorded_with=recorded_with,
        cassette=cassette,
        messages=unit.case.messages,
    )


_OUTLINED: list[tuple[Suite, Unit, int, SentSettings, ExpectedOutline]] = []
"""The latest unit's settings and outline as records hold them (its attempts come in a row)."""


_SENT: dict[tuple[int, int], tuple[object, SentSettings]] = {}
_OUTLINES: dict[int, tuple[object, ExpectedOutline]] = {}


def _unit_outline(suite: Suite, unit: Unit, max_steps: int) -> tuple[SentSettings, ExpectedOutline]:
    if _OUTLINED:
        known = _OUTLINED[0]
        if known[0] is suite and known[1] is unit and known[2] == max_steps:
            return known[3], known[4]
    settings = unit_settings(suite, unit, 0)
    expected = unit.expectation
    # By the objects they are made from (held, so the ids are not reused): many units
    # share their settings object, the variants of a case its expectation.
    known_sent = _SENT.get((id(settings), max_steps))
    if known_sent is not None and known_sent[0] is settings:
        sent = known_sent[1]
    else:
        sent = _one_of_equals(
            SentSettings(
                tool_choice=settings.tool_choice.mode,
                forced_tool=settings.tool_choice.tool,
                parallel_tool_calls=settings.parallel_tool_calls,
                strict=settings.strict,
                temperature=settings.temperature,
                max_output_tokens=settings.max_output_tokens,
                stream=settings.stream,
                max_steps=max_steps,
            )
        )
        _SENT[(id(settings), max_steps)] = (settings, sent)
    known_outline = _OUTLINES.get(id(expected))
    if known_outline is not None and known_outline[0] is expected:
        outline = known_outline[1]
    else:
        outline = _one_of_equals(ExpectedOutline(expected.kind, tuple(expected.tools)))
        _OUTLINES[id(expected)] = (expected, outline)
    for made in (_SENT, _OUTLINES):
        if len(made) >= 4096:
            made.clear()
    _OUTLINED[:] = [(suite, unit, max_steps, sent, outline)]
    return sent, outline


@dataclass
class _Judged:
    """The turns of an attempt as recorded, with the findings of each."""

    steps: list[StepRecord] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    first: Decision | None = None
    """The first phase's decision, merged: what the case's expectation was checked on."""

    def add(self, step: int, found: list[Finding]) -> None:
        if not found:
            return
        record = self.steps[step]
        self.steps[step] = replace(record, findings=record.findings + tuple(found))
        self.findings += [replace(finding, step=step) for finding in found]


def _judge(suite: Suite, unit: Unit, conversation: Conversation, adapter: ClientAdapter) -> _Judged:
    """Judge each turn as it came: the first phase against the case's expectation, the
    answer after tool results against `then`, and the tool-loop rules on every turn
    (repeated failed calls, the step limit, and the history each request sent).

    The first phase is the first turn, plus the following one-call turns when the
    suite asks for calls one per turn: they are judged together, as one decision.
    """
    judged = _Judged()
    expectation, then = unit.expectation, unit.case.then
    # A call to a contract tool this case does not declare is an unknown tool here.
    contract = suite.contract.restricted(unit.case.tools)
    sequential = suite.config.parallel_tool_calls is False and len(expectation.calls) > 1
    phase: list[Decision] = []
    phase_open, then_checked, any_tool_error = True, False, False
    failed_calls: set[str] = set()
    """Canonical (name, arguments) of calls whose tool failed for good, so far."""
    last = len(conversation.turns) - 1
    for step, turn in enumerate(conversation.turns):
        decision = turn.decision
        judged.steps.append(
            StepRecord(
                step,
                turn.request_sha256,
                # The record keeps what its run-log line holds: the raw body and the
                # native assistant turn served the conversation, and would make every
                # record several times larger (workers send records to the parent).
                decision.as_logged(_shared(decision.finish_reason), _shared(decision.model)),
                tuple(classify_arguments(call, contract) for call in decision.calls),
                tuple(execution.result for execution in turn.executions),
                latency_ms=turn.latency_ms,
                retries=turn.retries,
            )
        )
        if phase_open and (step == 0 or decision.calls):
            phase.append(decision)
            if not (sequential and decision.calls and not _phase_complete(phase, unit)):
                phase_open = False
                judged.add(step, judge_expectation(_merged(phase), expectation, contract))
        elif phase_open:
            # An answer cut a one-call-per-turn phase short: judge the calls made so far.
            phase_open = False
            judged.add(step - 1, judge_expectation(_merged(phase), expectation, contract))
        if step > 0 and not decision.calls and then is not None and not then_checked:
            then_checked = True
            judged.add(
                step, judge_expectation(decision, then, contract, after_error=any_tool_error)
            )
        judged.add(step, _repeated_failures(decision, failed_calls))
        judged.add(step, _history_findings(adapter, turn.request_body))
        if conversation.step_limit and step == last:
            limit = conversation.max_steps
            message = f"still calling tools after {limit} turns (max_steps)"
            judged.add(step, [Finding("step_limit", "/calls", limit, step + 1, message)])
        answered = decision.calls if turn.executions else ()
        for call, execution in zip(answered, turn.executions, strict=True):
            if execution.failure is not None:
                any_tool_error = True
                if not execution.failure.retryable:
                    failed_calls.add(_call_key(call.name, call.arguments))
    if phase_open and phase:
        # The attempt ended inside the first phase (step limit or error): judge what came.
        judged.add(len(phase) - 1, judge_expectation(_merged(phase), expectation, contract))
    judged.first = _merged(phase) if phase else None
    return judged


_HISTORY: list[tuple[ClientAdapter, Any, list[Finding]]] = []
"""The latest request body's history findings: a unit's attempts send the same first
request (one object, `conversation`), and nothing changes a body once built."""


def _history_findings(adapter: ClientAdapter, body: Any) -> list[Finding]:
    if _HISTORY:
        known = _HISTORY[0]
        if known[0] is adapter and known[1] is body:
            return known[2]
    history = history_of(adapter, body)
    found = [] if history is None else [history_finding(p) for p in check_history(history)]
    _HISTORY[:] = [(adapter, body, found)]
    return found


def _shared(text: str | None) -> str | None:
    """One object for the texts most records repeat (interned)."""
    return None if text is None else sys.intern(text)


_EQUALS: dict[tuple[type, str], Any] = {}
"""One object per distinct value that many records hold (settings, outlines, signatures),
keyed by type and repr, which tell `0` from `0.0` and `True` from `1` as `==` does not."""


def _one_signature(value: Signature) -> Signature:
    """`_one_of_equals` for a signature: strings only, which `==` tells apart exactly."""
    known = _SIGNATURES.get(value)
    if known is None:
        if len(_SIGNATURES) >= 4096:
            _SIGNATURES.clear()
        known = _SIGNATURES[value] = value
    return known


_SIGNATURES: dict[Signature, Signature] = {}


def _one_of_equals(value: _T) -> _T:
    key = (type(value), repr(value))
    known = _EQUALS.get(key)
    if known is None:
        if len(_EQUALS) >= 4096:
            _EQUALS.clear()
        known = _EQUALS[key] = value
    shared: _T = known
    return shared


def _drift(
    mismatch: Mismatch, changes: tuple[Difference, ...], unit: Unit, *, step: int
) -> Finding:
    first = changes[0].to_json() if changes else None
    message = mismatch.message
    if changes and mismatch.where:
        message = f"request drift at {mismatch.where}: {drift_summary(changes)} changed"
    return Finding(
        "request_drift",
        first["path"] if first else "",
        first["before"] if first else None,
        first["after"] if first else None,
        f"{message}; re-record with `{record_hint(unit)}`",
        step=step,
        changes=changes,
    )


def _repeated_failures(decision: Decision, failed: set[str]) -> list[Finding]:
    if not failed:
        return []  # nearly always: no call has failed for good, no key to make
    return [
        Finding(
            "repeated_failed_call",
            f"/calls/{index}",
            None,
            {"tool": call.name, "arguments": call.arguments},
            f"{call.name} repeats a call that already failed with a non-retryable error",
        )
        for index, call in enumerate(decision.calls)
        if _call_key(call.name, call.arguments) in failed
    ]


def _call_key(name: str, arguments: object) -> str:
    return canonical_json([name, arguments])


def _merged(phase: list[Decision]) -> Decision:
    """The calls of consecutive one-call turns as one decision, for set comparison."""
    if len(phase) == 1:
        return phase[0]
    calls = tuple(call for decision in phase for call in decision.calls)
    last = phase[-1]
    kind: DecisionKind = "invalid" if any(d.kind == "invalid" for d in phase) else "tool_call"
    return Decision(kind, last.text, calls, last.finish_reason, last.stop)


def _phase_complete(phase: list[Decision], unit: Unit) -> bool:
    return sum(len(d.calls) for d in phase) >= len(unit.expectation.calls)
