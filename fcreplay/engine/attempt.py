"""One attempt: a case's multi-turn exchange with a model, checked turn by turn."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.canonical import canonical_json
from fcreplay.decision import Decision, DecisionKind, ProviderError, signature
from fcreplay.engine.plan import Unit, unit_settings, unit_tools
from fcreplay.exchange import HistoryItem, Message, ToolResult, WireRequest, WireResponse
from fcreplay.finding import Finding
from fcreplay.inputs.suite import Suite
from fcreplay.judge.expectations import check_expectation
from fcreplay.judge.repair import check_arguments
from fcreplay.runlog import SCHEMA_VERSION
from fcreplay.structdiff import Difference
from fcreplay.version import __version__

MAX_RETRY_DELAY = 60.0
"""Longest server-requested wait honoured before giving up on a retry (seconds)."""


class Player(Protocol):
    """Where responses come from: the live provider (recording) or a cassette (replay)."""

    def exchange(self, request: WireRequest, *, step: int) -> WireResponse: ...

    def pause(self, seconds: float) -> None: ...


class AttemptAborted(Exception):
    """The attempt could not get an answer; the record says why."""

    def __init__(self, kind: str, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.detail = detail or {}

    def to_json(self) -> dict[str, Any]:
        """The reason, as written in the attempt record."""
        return {"type": self.kind, "message": str(self), **self.detail}


class RequestDrift(AttemptAborted):
    """The request built now differs from the one recorded at the same place."""

    def __init__(self, message: str, changes: list[Difference]) -> None:
        super().__init__("request_drift", message, {"changes": [c.to_json() for c in changes]})
        self.changes = changes


@dataclass
class _Turns:
    """What happened so far in an attempt, turn by turn."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    failed_calls: set[str] = field(default_factory=set)
    """Canonical (name, arguments) of calls whose tool failed for good."""
    any_tool_error: bool = False

    def add(self, step: int, found: list[Finding]) -> None:
        self.steps[step]["findings"] += [f.to_json() for f in found]
        self.findings += [{**f.to_json(), "step": step} for f in found]


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
) -> dict[str, Any]:
    """Run one attempt of a unit and return its run-log record (never raises for findings)."""
    started = clock()
    history: list[HistoryItem] = []
    if suite.system_prompt:
        history.append(Message("system", suite.system_prompt))
    history += list(unit.case.messages)
    turns = _Turns()
    first_request: WireRequest | None = None
    # The first turn, plus the following one-call turns when calls come one per turn:
    # judged together against the case's expectation.
    phase: list[Decision] = []
    phase_open, then_checked = True, False
    expectation, then, contract = unit.expectation, unit.case.then, suite.contract
    aborted: AttemptAborted | ProviderError | None = None
    model_reported: str | None = None
    max_steps = 1 if unit.single_turn else suite.config.max_steps
    sequential = suite.config.parallel_tool_calls is False and len(unit.expectation.calls) > 1
    for step in range(max_steps):
        request = adapter.build_request(
            unit.target.model,
            history,
            unit_tools(suite, unit),
            unit_settings(suite, unit, step),
        )
        first_request = first_request or request
        try:
            outcome = _send(player, adapter, request, step=step, max_retries=max_retries)
        except AttemptAborted as exc:
            aborted = exc
            break
        if isinstance(outcome, ProviderError):
            aborted = outcome
            break
        decision = outcome
        model_reported = model_reported or decision.model
        turns.steps.append(
            {
                "step": step,
                "request_sha256": request.body_sha256,
                "decision": decision.to_json(),
                "arguments": [check_arguments(c, suite.contract).to_json() for c in decision.calls],
                "tool_results": [],
                "findings": [],
            }
        )
        if phase_open and (step == 0 or decision.calls):
            phase.append(decision)
            if not (sequential and decision.calls and not _phase_complete(phase, unit)):
                phase_open = False
                turns.add(step, check_expectation(_merged(phase), expectation, contract))
        elif phase_open:
            # An answer cut a one-call-per-turn phase short: judge the calls made so far.
            phase_open = False
            turns.add(step - 1, check_expectation(_merged(phase), expectation, contract))
        if step > 0 and not decision.calls and then is not None and not then_checked:
            then_checked = True
            turns.add(
                step,
                check_expectation(decision, then, contract, after_error=turns.any_tool_error),
            )
        turns.add(step, _repeated_failures(decision, turns.failed_calls))
        if not decision.calls or decision.kind != "tool_call" or unit.single_turn:
            break
        if step == max_steps - 1:
            turns.add(
                step,
                [
                    Finding(
                        "step_limit",
                        "/calls",
                        max_steps,
                        len(turns.steps),
                        f"still calling tools after {max_steps} turns (max_steps)",
                    )
                ],
            )
            break
        try:
            results = _execute(suite, decision, turns)
        except AttemptAborted as exc:
            aborted = exc
            break
        turns.steps[step]["tool_results"] = [
            {"call_id": r.call_id, "name": r.name, "content": r.content, "is_error": r.is_error}
            for r in results
        ]
        history = adapter.append_tool_result(history, decision, results)
    if phase_open and phase:
        # The attempt ended inside the first phase (step limit or error): judge what came.
        turns.add(len(phase) - 1, check_expectation(_merged(phase), expectation, contract))
    settings = unit_settings(suite, unit, 0)
    first = _merged(phase) if phase else None
    error = aborted.to_json() if aborted is not None else None
    if isinstance(aborted, RequestDrift):
        # Drift is a finding about the adapter, not a failure to get an answer.
        first_change = aborted.changes[0].to_json() if aborted.changes else {}
        turns.findings.append(
            {
                "code": "request_drift",
                "path": first_change.get("path", ""),
                "expected": first_change.get("before"),
                "actual": first_change.get("after"),
                "message": str(aborted),
                "step": len(turns.steps),
                "changes": [change.to_json() for change in aborted.changes],
            }
        )
        error = None
    verdict = "error" if error else ("fail" if turns.findings else "pass")
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "target": unit.target.name,
        "adapter": adapter.NAME,
        "model": unit.target.model,
        "model_reported": model_reported,
        "variant": unit.variant,
        "case_id": unit.case.id,
        "attempt": attempt,
        "elapsed_ms": round((clock() - started) * 1000),
        "request_settings": {
            "tool_choice": settings.tool_choice.mode,
            "forced_tool": settings.tool_choice.tool,
            "parallel_tool_calls": settings.parallel_tool_calls,
            "strict": settings.strict,
            "temperature": settings.temperature,
            "max_output_tokens": settings.max_output_tokens,
            "stream": settings.stream,
            "max_steps": max_steps,
        },
        "request_sha256": first_request.body_sha256 if first_request else None,
        "adapter_version": adapter.VERSION,
        "prompt_version": suite.config.prompt_version,
        "contract_hash": suite.contract.contract_hash,
        "cases_version": suite.cases_version,
        "fcreplay_version": __version__,
        "expect": {"kind": expectation.kind, "tools": list(expectation.tools)},
        "verdict": verdict,
        "signature": list(signature(first)) if first else None,
        "steps": turns.steps,
        "findings": turns.findings,
        "transport_error": error,
    }


def _send(
    player: Player, adapter: ClientAdapter, request: WireRequest, *, step: int, max_retries: int
) -> Decision | ProviderError:
    """Send with bounded retries on retryable provider errors, honouring their delays."""
    for attempt in range(max_retries + 1):
        response = player.exchange(request, step=step)
        if response.events is not None and 200 <= response.status < 300:
            outcome = adapter.parse_stream(response.status, list(response.events))
        else:
            outcome = adapter.parse_decision(response.status, response.body)
        if not isinstance(outcome, ProviderError) or not outcome.retryable:
            return outcome
        if attempt == max_retries:
            return outcome
        delay = _retry_delay(outcome, response, attempt)
        if delay is None:
            return outcome
        player.pause(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def _retry_delay(error: ProviderError, response: WireResponse, attempt: int) -> float | None:
    """The server's requested delay when sane, else exponential backoff with jitter."""
    requested: float | None = error.retry_after
    header = response.headers.get("retry-after")
    if requested is None and header is not None:
        try:
            requested = float(header)
        except ValueError:
            requested = None  # an HTTP date: fall back to backoff
    if requested is not None:
        return requested if 0 <= requested <= MAX_RETRY_DELAY else None
    return min(0.5 * 2.0**attempt, 8.0) * random.uniform(0.75, 1.0)


def _execute(suite: Suite, decision: Decision, turns: _Turns) -> list[ToolResult]:
    if suite.executor is None:
        raise AttemptAborted(
            "no_tool_results",
            "the model called a tool but the suite has no tool_results file to answer it",
        )
    results = []
    for call in decision.calls:
        execution = suite.executor.execute(call)
        if execution.failure is not None:
            turns.any_tool_error = True
            if not execution.failure.retryable:
                turns.failed_calls.add(_call_key(call.name, call.arguments))
        results.append(execution.result)
    return results


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


def _call_key(name: str, arguments: Any) -> str:
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
