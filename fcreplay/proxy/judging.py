"""The decision of one recorded client exchange as a typed attempt record, for the run log.

A free client has no case file, so nothing says what it should have decided: an
exchange is judged against the tools its own request declared (or a contract,
when one is given). Each model exchange is one record: `case_id` is its
cassette's name, `variant` its place among the cassette's model exchanges
(`exchange-1`, `exchange-2`, ...), so a golden baseline keeps one entry per
exchange of each test. Verdicts: `error` for a provider error or no recorded
answer, `fail` when a call breaks its tool's schema or names an undeclared tool,
`pass` otherwise.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from fcreplay.adapters import get_adapter
from fcreplay.canonical import sorted_json
from fcreplay.cassettes.interactions import Interaction
from fcreplay.decision import Decision, ProviderError, signature
from fcreplay.finding import Finding
from fcreplay.inputs.contract import Contract
from fcreplay.judge.expectations import validate_call
from fcreplay.judge.repair import check_arguments
from fcreplay.record import (
    Aborted,
    AttemptError,
    AttemptRecord,
    ExpectedOutline,
    SentSettings,
    StepRecord,
    Verdict,
)
from fcreplay.sources import pointer
from fcreplay.version import __version__

FREE = ExpectedOutline("any", ())
"""What a free client's exchange is expected to do: nothing in particular."""


def variant_of(ordinal: int) -> str:
    """The variant name of a cassette's `ordinal`-th model exchange (1-based)."""
    return f"exchange-{ordinal}"


def judge_exchange(
    interaction: Interaction,
    adapter_name: str,
    *,
    run_id: str,
    target: str,
    case_id: str,
    ordinal: int,
    elapsed_ms: int = 0,
    contract: Contract | None = None,
    miss: str | None = None,
) -> AttemptRecord:
    """The record of one model exchange; `miss` says why it got no recorded answer."""
    adapter = get_adapter(adapter_name)
    request = interaction.request
    body = request.body if isinstance(request.body, dict) else {}
    view = adapter.read_request(body, request.uri)
    tools = contract or Contract(tuple(adapter.sent_tools(body)))
    outcome: Decision | AttemptError
    if miss is not None:
        outcome = Aborted("missing_interaction", miss)
    else:
        outcome = _parse(adapter_name, interaction)
    steps: tuple[StepRecord, ...] = ()
    findings: tuple[Finding, ...] = ()
    verdict: Verdict = "error"
    if isinstance(outcome, Decision):
        step = view.tool_result_turns
        found = tuple(
            replace(finding, path=pointer("calls", index) + finding.path)
            for index, call in enumerate(outcome.calls)
            for finding in validate_call(call, tools)
        )
        arguments = tuple(check_arguments(call, tools) for call in outcome.calls)
        steps = (StepRecord(step, _sha256(body), outcome, arguments, (), found),)
        findings = tuple(replace(finding, step=step) for finding in found)
        verdict = "fail" if findings else "pass"
    return AttemptRecord(
        run_id=run_id,
        target=target,
        adapter=adapter_name,
        model=view.model or "",
        model_reported=outcome.model if isinstance(outcome, Decision) else None,
        variant=variant_of(ordinal),
        case_id=case_id,
        attempt=1,
        elapsed_ms=elapsed_ms,
        request_settings=SentSettings(
            tool_choice=view.tool_choice.mode,
            forced_tool=view.tool_choice.tool,
            parallel_tool_calls=view.parallel_tool_calls,
            strict=False,
            temperature=_number(body.get("temperature")),
            max_output_tokens=None,
            stream=view.stream,
            max_steps=1,
        ),
        request_sha256=_sha256(body),
        adapter_version=adapter.VERSION,
        prompt_version=None,
        contract_hash=tools.contract_hash,
        cases_version=None,
        fcreplay_version=__version__,
        expect=FREE,
        verdict=verdict,
        signature=signature(outcome) if isinstance(outcome, Decision) else None,
        steps=steps,
        findings=findings,
        transport_error=None if isinstance(outcome, Decision) else outcome,
    )


def _parse(adapter_name: str, interaction: Interaction) -> Decision | ProviderError:
    adapter = get_adapter(adapter_name)
    response = interaction.response
    if response.events is not None and 200 <= response.status < 300:
        return adapter.parse_stream(response.status, list(response.events))
    body = response.body
    if body is None and response.events is not None:
        body = [{"event": event.event, "data": event.data} for event in response.events]
    return adapter.parse_decision(response.status, body)


def _sha256(body: dict[str, Any]) -> str:
    return hashlib.sha256(sorted_json(body).encode("utf-8")).hexdigest()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
