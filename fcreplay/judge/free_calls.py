"""The calls of a free client's exchange, checked against a contract or the tools it declared.

A client outside the suite has no case file, so nothing says which call it should
have got; what can still be checked is each call against its tool's schema:
an undeclared tool (`unknown_tool`), arguments that are not JSON (`invalid_json`)
or that break the schema (`missing_required`, `type_mismatch`, ...).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fcreplay.adapters.registry import get_adapter
from fcreplay.decision import Decision, ProviderError
from fcreplay.finding import Finding
from fcreplay.inputs.contract import Contract
from fcreplay.judge.expectations import validate_call
from fcreplay.sources import pointer


def declared_tools(api: str, body: Any) -> Contract:
    """The tools a request declared, as the contract its answer's calls are held to."""
    sent_tools = getattr(get_adapter(api), "sent_tools", None)
    if sent_tools is None or not isinstance(body, dict):
        return Contract(())
    return Contract(tuple(sent_tools(body)))


def call_findings(outcome: Decision | ProviderError | None, contract: Contract) -> list[Finding]:
    """Every schema finding of the decision's calls, each at `/calls/N/...`."""
    if not isinstance(outcome, Decision):
        return []
    return [
        replace(finding, path=pointer("calls", index) + finding.path)
        for index, call in enumerate(outcome.calls)
        for finding in validate_call(call, contract)
    ]
