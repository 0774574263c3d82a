"""Argument classes and the v1 repair policy."""

from __future__ import annotations

from typing import Any

import pytest

from fcreplay.decision import ToolCall
from fcreplay.inputs.contract import Contract
from fcreplay.judge.repair import classify_arguments

QUOTE = {"origin": "Казань", "destination": "Самара", "weight_kg": 2.5, "service": "express"}


def check(contract: Contract, arguments: dict[str, Any] | None, raw: Any = None) -> Any:
    return classify_arguments(ToolCall("c", "quote_delivery", arguments, raw), contract)


def test_valid_arguments_are_raw_valid(contract: Contract) -> None:
    result = check(contract, QUOTE)
    assert result.status == "raw_valid" and result.after is None and result.repairs == ()


@pytest.mark.parametrize(("sent", "repaired"), [("2,5", 2.5), ("2.5", 2.5), ("12", 12)])
def test_numeric_strings_are_repairable_keeping_before_and_after(
    contract: Contract, sent: str, repaired: float
) -> None:
    result = check(contract, {**QUOTE, "weight_kg": sent})
    assert result.status == "repairable"
    assert result.before["weight_kg"] == sent
    assert result.after == {**QUOTE, "weight_kg": repaired}
    assert [(r.path, r.before, r.after) for r in result.repairs] == [("/weight_kg", sent, repaired)]
    assert result.policy == "v1"
    assert result.to_json()["repairs"][0]["after"] == repaired


@pytest.mark.parametrize(
    "arguments",
    [
        {**QUOTE, "weight_kg": "2,5 кг"},  # units are not repaired
        {**QUOTE, "weight_kg": "1e3"},  # exponents are not repaired
        {**QUOTE, "weight_kg": "0"},  # repairs to 0, which is still out of range
        {**QUOTE, "weight_kg": "2,5", "service": "overnight"},  # another error remains
        {**QUOTE, "service": "Express"},  # nothing else is repaired
    ],
)
def test_anything_else_is_invalid(contract: Contract, arguments: dict[str, Any]) -> None:
    assert check(contract, arguments).status == "invalid"


def test_malformed_json_is_invalid_and_kept_raw(contract: Contract) -> None:
    result = check(contract, None, '{"weight_kg": 2,5}')
    assert result.status == "invalid" and result.before == '{"weight_kg": 2,5}'


def test_unknown_tool_is_invalid(contract: Contract) -> None:
    result = classify_arguments(ToolCall("c", "nope", {}, "{}"), contract)
    assert result.status == "invalid"
