"""Attempt records of client traffic, so run logs, reports and golden diffs cover it too.

One `AttemptRecord` per model exchange: `target` names the recording side (the
pytest plugin uses `pytest/<test module>`), `case_id` the conversation (the test),
`variant` the exchange's place (`exchange-0`, `exchange-1`, ...), `attempt` 1, and
`test` the pytest node id when there is one. Its one step holds the decision and
the findings of that exchange.
A provider's error answer is its `transport_error`, and so is a request replay
could not answer (`missing_interaction`, with the miss explained). Settings are
read back from the request itself (`read_request`); `expect` is the expectation
the test gave for that exchange, else what was decided.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from fcreplay.adapters.protocol import ReadBackAdapter
from fcreplay.adapters.registry import get_adapter
from fcreplay.canonical import sorted_json
from fcreplay.decision import ProviderError, signature
from fcreplay.finding import Finding
from fcreplay.neutral import RequestView, ToolChoice
from fcreplay.record import (
    Aborted,
    AttemptError,
    AttemptRecord,
    ExpectedOutline,
    SentSettings,
    StepRecord,
    Verdict,
)
from fcreplay.strictjson import exact_json
from fcreplay.traffic.cassette import shared_exact
from fcreplay.traffic.judging import ModelExchange, reads_back
from fcreplay.version import __version__

if TYPE_CHECKING:
    from fcreplay.inputs.cases import Expectation
    from fcreplay.inputs.contract import Contract
    from fcreplay.judge.repair import ArgumentClassification

EXCHANGE_VARIANT = "exchange-{index}"


@dataclass(frozen=True)
class Conversation:
    """What the records of one test (or any conversation) share."""

    run_id: str
    target: str
    case_id: str
    test: str | None = None
    contract: Contract | None = None
    """Arguments are classed against it (`judge.repair`) when given."""
    max_steps: int = 0
    """The limit the test checked the history against; 0 when it set none."""


def exchange_records(
    conversation: Conversation,
    exchanges: Sequence[ModelExchange],
    *,
    findings: Mapping[int, Sequence[Finding]],
    expectations: Mapping[int, Expectation],
    elapsed_ms: int = 0,
) -> list[AttemptRecord]:
    """The records of a conversation's model exchanges; `findings` and `expectations`
    are keyed by exchange index."""
    return [
        _record(
            conversation,
            exchange,
            tuple(findings.get(exchange.index, ())),
            expectations.get(exchange.index),
            elapsed_ms if exchange.index == 0 else 0,
        )
        for exchange in exchanges
    ]


def _record(
    conversation: Conversation,
    exchange: ModelExchange,
    found: tuple[Finding, ...],
    expected: Expectation | None,
    elapsed_ms: int,
) -> AttemptRecord:
    adapter = get_adapter(exchange.api)
    request = exchange.interaction.request
    body = request.body if isinstance(request.body, dict) else {}
    view = (
        cast(ReadBackAdapter, adapter).read_request(body, request.uri)
        if reads_back(exchange.api, adapter)
        else RequestView(None, None, 0, (), ToolChoice(), None, exchange.stream)
    )
    known = exchange.body_text if isinstance(request.body, dict) else None
    digest = _sha256(body) if known is None else _sha256_text(known)
    decision = exchange.decision
    error: AttemptError | None = None
    if isinstance(exchange.outcome, ProviderError):
        error = exchange.outcome
    elif exchange.miss is not None:
        error = Aborted("missing_interaction", exchange.miss.message)
    arguments: tuple[ArgumentClassification, ...] = ()
    if decision is not None and conversation.contract is not None:
        # Loaded with the first contract: a test that gives none never needs it.
        from fcreplay.judge.repair import classify_arguments

        arguments = tuple(
            classify_arguments(call, conversation.contract) for call in decision.calls
        )
    steps: tuple[StepRecord, ...] = ()
    if decision is not None:
        steps = (StepRecord(0, digest, decision, arguments, (), found),)
    if expected is not None:
        outline = ExpectedOutline(expected.kind, expected.tools)
    else:
        outline = ExpectedOutline(
            decision.kind if decision else "text",
            tuple(call.name for call in decision.calls) if decision else (),
        )
    verdict: Verdict = "error" if error else ("fail" if found else "pass")
    temperature = body.get("temperature")
    return AttemptRecord(
        run_id=conversation.run_id,
        target=conversation.target,
        adapter=exchange.api,
        model=view.model or "",
        model_reported=decision.model if decision else None,
        variant=EXCHANGE_VARIANT.format(index=exchange.index),
        case_id=conversation.case_id,
        attempt=1,
        elapsed_ms=elapsed_ms,
        request_settings=SentSettings(
            tool_choice=view.tool_choice.mode,
            forced_tool=view.tool_choice.tool,
            parallel_tool_calls=view.parallel_tool_calls,
            strict=False,
            temperature=temperature if isinstance(temperature, int | float) else None,
            max_output_tokens=None,
            stream=exchange.stream,
            max_steps=conversation.max_steps,
        ),
        request_sha256=digest,
        adapter_version=adapter.VERSION,
        prompt_version=None,
        contract_hash=conversation.contract.contract_hash if conversation.contract else "",
        cases_version=None,
        fcreplay_version=__version__,
        expect=outline,
        verdict=verdict,
        signature=signature(decision) if decision else None,
        steps=steps,
        findings=tuple(replace(finding, step=0) for finding in found),
        transport_error=error,
        test=conversation.test,
    )


def _sha256(body: object) -> str:
    if isinstance(body, dict) and all(type(key) is str for key in body):
        digest = hashlib.sha256(b"{")
        for number, key in enumerate(sorted(body)):
            digest.update(b"," if number else b"")
            digest.update(sorted_json(key).encode("utf-8"))
            digest.update(b":")
            digest.update(_sorted_bytes(body[key]))
        digest.update(b"}")
        return digest.hexdigest()
    return _sha256_text(sorted_json(body))


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_PIECES: dict[bytes, bytes] = {}
"""Sorted JSON of large body members by their exact bytes: a test suite sends the same
tool list with every request, and sorting it costs ten times writing it."""
_LARGE_PIECE = 2048
_MAX_PIECES = 256


def _sorted_bytes(value: object) -> bytes:
    """`sorted_json(value)` as UTF-8, taken from `_PIECES` for a large container seen before."""
    if not isinstance(value, dict | list):
        return sorted_json(value).encode("utf-8")
    exact = shared_exact(value) or exact_json(value)
    # Equal bytes are equal values unless a non-finite float was written as null.
    if exact is None or len(exact) < _LARGE_PIECE or b"null" in exact:
        return sorted_json(value).encode("utf-8")
    found = _PIECES.get(exact)
    if found is None:
        if len(_PIECES) >= _MAX_PIECES:
            _PIECES.clear()
        found = _PIECES[exact] = sorted_json(value).encode("utf-8")
    return found
