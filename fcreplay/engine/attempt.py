"""One attempt: hold the conversation, judge its phases turn by turn, and make its record."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from sys import intern
from typing import TYPE_CHECKING, Any, TypeVar

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.canonical import canonical_json
from fcreplay.decision import Decision, DecisionKind, Signature, signature
from fcreplay.engine.conversation import Conversation, converse
from fcreplay.engine.drift import drift_summary, labelled_changes
from fcreplay.engine.plan import Unit
from fcreplay.engine.players import Mismatch, Player
from fcreplay.engine.sources import record_hint
from fcreplay.engine.unitwork import UnitWork
from fcreplay.finding import Finding
from fcreplay.fingerprint import Fingerprint
from fcreplay.inputs.suite import Suite
from fcreplay.judge.expectations import judge_expectation
from fcreplay.judge.history import check_history, history_finding
from fcreplay.judge.repair import classify_arguments
from fcreplay.neutral import RequestSettings
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

if TYPE_CHECKING:
    from fcreplay.inputs.cases import Expectation

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
    work: UnitWork | None = None,
) -> AttemptRecord:
    """Run one attempt of a unit and return its run-log record (never raises for findings).

    `work`: what the unit's attempts share (`UnitWork`), made once by the caller for all
    of them; made here when not given."""
    started = clock()
    if work is None:
        work = UnitWork(suite, unit, adapter)
    conversation = converse(work, player, max_retries=max_retries, on_retry=on_retry)
    judged = _judge(work, conversation)
    error: AttemptError | None = None
    ended_by = conversation.ended_by
    if isinstance(ended_by, Mismatch):
        # SchemaChange is a finding about the adapter, not a failure to get an answer.
        changes = labelled_changes(ended_by, suite=suite, unit=unit, adapter=adapter)
        judged.findings.append(_drift(ended_by, changes, unit, step=len(judged.steps)))
    else:
        error = ended_by
    verdict: Verdict = "error" if error else ("fail" if judged.findings else "pass")
    if work.outline is None:
        work.outline = _unit_outline(work.first_settings(), unit, conversation.max_steps)
    sent, outline = work.outline
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


_SENT: dict[tuple[int, int], tuple[object, SentSettings]] = {}
_OUTLINES: dict[int, tuple[object, ExpectedOutline]] = {}


def _unit_outline(
    settings: RequestSettings, unit: Unit, max_steps: int
) -> tuple[SentSettings, ExpectedOutline]:
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
    return sent, outline


class _Judged:
    """The turns of an attempt as recorded, with the findings of each."""

    __slots__ = ("findings", "first", "steps")

    def __init__(self) -> None:
        self.steps: list[StepRecord] = []
        self.findings: list[Finding] = []
        self.first: Decision | None = None
        """The first phase's decision, merged: what the case's expectation was checked on."""


def _judge(work: UnitWork, conversation: Conversation) -> _Judged:
    """Judge each turn as it came: the first phase against the case's expectation, the
    answer after tool results against `then`, and the tool-loop rules on every turn
    (repeated failed calls, the step limit, and the history each request sent).

    The first phase is the first turn, plus the following one-call turns when the
    suite asks for calls one per turn: they are judged together, as one decision.
    Each turn's record is made once, with its findings, after every turn is judged
    (a cut-short phase adds to the turn before).
    """
    judged = _Judged()
    expectation, then, contract = work.expectation, work.then, work.contract
    sequential = work.sequential
    phase: list[Decision] = []
    phase_open, then_checked, any_tool_error = True, False, False
    failed_calls: set[str] = set()
    """Canonical (name, arguments) of calls whose tool failed for good, so far."""
    turns = conversation.turns
    found: dict[int, list[Finding]] = {}
    """The findings of each turn that has any, in the order found."""
    findings = judged.findings

    def add(step: int, more: list[Finding]) -> None:
        found.setdefault(step, []).extend(more)
        findings.extend([replace(finding, step=step) for finding in more])

    last = len(turns) - 1
    for step, turn in enumerate(turns):
        decision = turn.decision
        if phase_open and (step == 0 or decision.calls):
            phase.append(decision)
            if not (sequential and decision.calls and not _phase_complete(phase, expectation)):
                phase_open = False
                if more := judge_expectation(_merged(phase), expectation, contract):
                    add(step, more)
        elif phase_open:
            # An answer cut a one-call-per-turn phase short: judge the calls made so far.
            phase_open = False
            if more := judge_expectation(_merged(phase), expectation, contract):
                add(step - 1, more)
        if step > 0 and not decision.calls and then is not None and not then_checked:
            then_checked = True
            if more := judge_expectation(decision, then, contract, after_error=any_tool_error):
                add(step, more)
        if failed_calls and (more := _repeated_failures(decision, failed_calls)):
            add(step, more)
        if more := _history_findings(work, turn.request_body, step):
            add(step, more)
        if conversation.step_limit and step == last:
            limit = conversation.max_steps
            message = f"still calling tools after {limit} turns (max_steps)"
            add(step, [Finding("step_limit", "/calls", limit, step + 1, message)])
        if turn.executions:
            for call, execution in zip(decision.calls, turn.executions, strict=True):
                if execution.failure is not None:
                    any_tool_error = True
                    if not execution.failure.retryable:
                        failed_calls.add(_call_key(call.name, call.arguments))
    # The attempt ended inside the first phase (step limit or error): judge what came.
    if phase_open and phase and (more := judge_expectation(_merged(phase), expectation, contract)):
        add(len(phase) - 1, more)
    judged.first = _merged(phase) if phase else None
    steps = judged.steps
    for step, turn in enumerate(turns):
        decision = turn.decision
        finish_reason, model = decision.finish_reason, decision.model
        calls, executions = decision.calls, turn.executions
        steps.append(
            StepRecord(
                step,
                turn.request_sha256,
                # The record keeps what its run-log line holds: the raw body and the native
                # assistant turn served the conversation, and would make every record
                # several times larger (workers send records to the parent). Its texts
                # are interned: most records repeat them.
                decision.as_logged(
                    None if finish_reason is None else intern(finish_reason),
                    None if model is None else intern(model),
                ),
                tuple([classify_arguments(call, contract) for call in calls]) if calls else (),
                tuple([execution.result for execution in executions]) if executions else (),
                tuple(found[step]) if step in found else (),
                latency_ms=turn.latency_ms,
                retries=turn.retries,
            )
        )
    return judged


def _history_findings(work: UnitWork, body: Any, step: int) -> list[Finding]:
    """The history findings of a request body; the first request's once per unit (its
    attempts send the one request `conversation.converse` built, and nothing changes a
    body once built)."""
    if step == 0:
        known = work.first_history
        if known is not None and known[0] is body:
            return known[1]
    read = work.read_history
    if read is None:
        found: list[Finding] = []
    else:
        found = [history_finding(problem) for problem in check_history(read(body))]
    if step == 0:
        work.first_history = (body, found)
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


def _phase_complete(phase: list[Decision], expectation: Expectation) -> bool:
    return sum(len(d.calls) for d in phase) >= len(expectation.calls)
