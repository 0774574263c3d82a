"""The conversation loop of one attempt: request, answer, tool results, until the model stops."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.decision import Decision, ProviderError
from fcreplay.engine.players import Mismatch, Player
from fcreplay.engine.request_options import with_target_options
from fcreplay.engine.unitwork import UnitWork
from fcreplay.inputs.tool_results import Execution
from fcreplay.neutral import HistoryItem, WireRequest, WireResponse
from fcreplay.quickinit import quick
from fcreplay.record import Aborted

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
    work: UnitWork,
    player: Player,
    *,
    max_retries: int,
    on_retry: Callable[[str], None] | None = None,
) -> Conversation:
    """Hold the attempt's conversation: re-send the whole history each turn, answering
    calls from the suite's tool results, until the model answers without calls."""
    suite, unit, adapter = work.suite, work.unit, work.adapter
    history: list[HistoryItem] = list(work.opening)
    turns: list[Turn] = []
    first: WireRequest | None = None
    ended_by: Mismatch | Aborted | ProviderError | None = None
    model_reported: str | None = None
    max_steps = work.max_steps
    single_turn = work.single_turn
    executor = suite.executor
    step_limit = False
    target = unit.target
    for step in range(max_steps):
        if step == 0:
            request = work.first_request
            if request is None:
                built = adapter.build_request(
                    target.model, history, work.tools, work.first_settings()
                )
                request = work.first_request = with_target_options(built, target)
            first = request
        else:
            request = adapter.build_request(
                target.model, history, work.tools, work.later_settings()
            )
            request = with_target_options(request, target)
        outcome, ms, retries = _send(
            player,
            adapter,
            request,
            step=step,
            max_retries=max_retries,
            on_retry=on_retry,
            target=target.name,
        )
        if not isinstance(outcome, Decision):
            ended_by = outcome
            break
        decision = outcome
        model_reported = model_reported or decision.model
        executions: tuple[Execution, ...] = ()
        ended = not decision.calls or decision.kind != "tool_call" or single_turn
        if not ended:
            if step == max_steps - 1:
                step_limit = ended = True
            elif executor is None:
                ended_by = Aborted(
                    "no_tool_results",
                    "the model called a tool but the suite has no tool_results file to answer it",
                )
                ended = True
            else:
                # The turn is made with its answers (no second, replaced Turn).
                executions = tuple([executor.execute(call) for call in decision.calls])
        turns.append(
            Turn(
                request.body_sha256,
                decision,
                executions,
                request_body=request.body,
                latency_ms=ms,
                retries=retries,
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
        first_request_sha256=first.body_sha256 if first is not None else None,
        model_reported=model_reported,
        max_steps=max_steps,
        step_limit=step_limit,
    )


_Sent = tuple[Decision | ProviderError | Mismatch | Aborted, int | None, int]
"""The outcome of one turn's request, with what getting it took: the provider's answer
time summed over retries (None when unknown), and the retries (a plain tuple, made for
every turn)."""


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
            return answer, latency if retries else None, retries
        latency = (
            None if latency is None or answer.latency_ms is None else latency + answer.latency_ms
        )
        if answer.events is not None and 200 <= answer.status < 300:
            outcome = adapter.parse_stream(answer.status, list(answer.events))
        else:
            outcome = adapter.parse_decision(answer.status, answer.body)
        if not isinstance(outcome, ProviderError) or not outcome.retryable:
            return outcome, latency, retries
        delay = None if retries == max_retries else _retry_delay(outcome, answer, retries)
        if delay is None:
            return outcome, latency, retries
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
