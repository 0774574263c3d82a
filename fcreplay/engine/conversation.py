"""The conversation loop of one attempt: request, answer, tool results, until the model stops."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.decision import Decision, ProviderError
from fcreplay.engine.plan import Unit, unit_settings, unit_tools
from fcreplay.engine.players import Mismatch, Player
from fcreplay.engine.request_options import with_target_options
from fcreplay.inputs.suite import Suite
from fcreplay.inputs.tool_results import Execution
from fcreplay.neutral import HistoryItem, Message, WireRequest, WireResponse
from fcreplay.quickinit import quick
from fcreplay.record import Aborted

if TYPE_CHECKING:
    from fcreplay.inputs.contract import ToolSpec

MAX_RETRY_DELAY = 60.0
"""Longest server-requested wait honoured before giving up on a retry (seconds)."""


@quick
@dataclass(frozen=True)
class Turn:
    """One model turn: the request's hash, the decision, and how its calls were answered."""

    request_sha256: str
    decision: Decision
    executions: tuple[Execution, ...] = ()
    """The fake executor's answer to each call; empty when the conversation stopped here."""
    request_body: Any = field(default=None, compare=False, repr=False)
    """The request as built, for the checks of its tool-loop history."""
    latency_ms: int | None = None
    """The provider's answer time, summed over the turn's retries; None when unknown."""
    retries: int = 0


@quick
@dataclass(frozen=True)
class Conversation:
    """Everything that happened in one attempt, in order, before any judging."""

    turns: tuple[Turn, ...]
    ended_by: Mismatch | Aborted | ProviderError | None
    """Why the conversation stopped without a final answer, if it did."""
    first_request_sha256: str | None
    """Of the first request built, even when it got no answer."""
    model_reported: str | None
    max_steps: int
    step_limit: bool
    """Whether the model was still calling tools when `max_steps` ran out."""


def converse(
    suite: Suite,
    unit: Unit,
    player: Player,
    *,
    adapter: ClientAdapter,
    max_retries: int,
    on_retry: Callable[[str], None] | None = None,
) -> Conversation:
    """Hold the attempt's conversation: re-send the whole history each turn, answering
    calls from the suite's tool results, until the model answers without calls."""
    history: list[HistoryItem] = []
    if suite.system_prompt:
        history.append(_system_message(suite.system_prompt))
    history += unit.case.messages
    turns: list[Turn] = []
    requests: list[WireRequest] = []
    ended_by: Mismatch | Aborted | ProviderError | None = None
    model_reported: str | None = None
    max_steps = 1 if unit.single_turn else suite.config.max_steps
    step_limit = False
    tools = unit_tools(suite, unit)
    for step in range(max_steps):
        if step == 0:
            request = _first_request(suite, unit, adapter, history, tools)
        else:
            request = adapter.build_request(
                unit.target.model, history, tools, unit_settings(suite, unit, step)
            )
            request = with_target_options(request, unit.target)
        requests.append(request)
        sent = _send(
            player,
            adapter,
            request,
            step=step,
            max_retries=max_retries,
            on_retry=on_retry,
            target=unit.target.name,
        )
        outcome = sent.outcome
        if not isinstance(outcome, Decision):
            ended_by = outcome
            break
        decision = outcome
        model_reported = model_reported or decision.model
        executions: tuple[Execution, ...] = ()
        ended = not decision.calls or decision.kind != "tool_call" or unit.single_turn
        if not ended:
            if step == max_steps - 1:
                step_limit = ended = True
            elif suite.executor is None:
                ended_by = Aborted(
                    "no_tool_results",
                    "the model called a tool but the suite has no tool_results file to answer it",
                )
                ended = True
            else:
                # The turn is made with its answers (no second, replaced Turn).
                executions = tuple(suite.executor.execute(call) for call in decision.calls)
        turns.append(
            Turn(
                request.body_sha256,
                decision,
                executions,
                request_body=request.body,
                latency_ms=sent.latency_ms,
                retries=sent.retries,
            )
        )
        if ended:
            break
        history = adapter.append_tool_result(
            history, decision, [execution.result for execution in executions]
        )
    return Conversation(
        turns=tuple(turns),
        ended_by=ended_by,
        # Read after the exchanges: a replayed request inherits the recorded hash.
        first_request_sha256=requests[0].body_sha256 if requests else None,
        model_reported=model_reported,
        max_steps=max_steps,
        step_limit=step_limit,
    )


_FIRST: list[tuple[Suite, Unit, ClientAdapter, WireRequest]] = []
"""The latest unit's first request. Its attempts come in a row and build the same one
(from the same prompt, messages, tools and settings); nothing changes a request once
built, and a replayed one only takes the hash of the recording it matches, which is its
own hash."""


def _first_request(
    suite: Suite,
    unit: Unit,
    adapter: ClientAdapter,
    history: list[HistoryItem],
    tools: list[ToolSpec],
) -> WireRequest:
    if _FIRST:
        known = _FIRST[0]
        if known[0] is suite and known[1] is unit and known[2] is adapter:
            return known[3]
    built = adapter.build_request(unit.target.model, history, tools, unit_settings(suite, unit, 0))
    request = with_target_options(built, unit.target)
    _FIRST[:] = [(suite, unit, adapter, request)]
    return request


_SYSTEM: list[Message] = []
"""The latest system prompt's message: a run has one prompt, and every attempt opens with it."""


def _system_message(prompt: str) -> Message:
    if _SYSTEM and _SYSTEM[0].content is prompt:
        return _SYSTEM[0]
    message = Message("system", prompt)
    _SYSTEM[:] = [message]
    return message


@quick
@dataclass(frozen=True)
class _Sent:
    """The outcome of one turn's request, with what getting it took."""

    outcome: Decision | ProviderError | Mismatch | Aborted
    latency_ms: int | None
    retries: int


def _send(
    player: Player,
    adapter: ClientAdapter,
    request: WireRequest,
    *,
    step: int,
    max_retries: int,
    on_retry: Callable[[str], None] | None,
    target: str,
) -> _Sent:
    """Send with bounded retries on retryable provider errors, honouring their delays."""
    retries = 0
    latency: int | None = 0
    while True:
        answer = player.answer(request, step=step)
        if not isinstance(answer, WireResponse):
            return _Sent(answer, latency if retries else None, retries)
        latency = (
            None if latency is None or answer.latency_ms is None else latency + answer.latency_ms
        )
        if answer.events is not None and 200 <= answer.status < 300:
            outcome = adapter.parse_stream(answer.status, list(answer.events))
        else:
            outcome = adapter.parse_decision(answer.status, answer.body)
        if not isinstance(outcome, ProviderError) or not outcome.retryable:
            return _Sent(outcome, latency, retries)
        delay = None if retries == max_retries else _retry_delay(outcome, answer, retries)
        if delay is None:
            return _Sent(outcome, latency, retries)
        if on_retry is not None:
            what = outcome.type if outcome.type == "incomplete_stream" else str(outcome.status)
            on_retry(f"{what} from {target}, retry {retries + 1}/{max_retries} in {delay:.1f} s")
        player.pause(delay)
        retries += 1


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
