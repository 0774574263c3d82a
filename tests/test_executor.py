"""The fake executor: rules as data, first match wins, errors carry retryable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fcreplay.decision import ToolCall
from fcreplay.errors import InputError
from fcreplay.inputs.contract import Contract
from fcreplay.inputs.tool_results import load_executor

from .conftest import ROOT

RESULTS = ROOT / "cases" / "delivery_results.json"


def test_example_rules_follow_the_seed_executor(contract: Contract) -> None:
    executor = load_executor(RESULTS, contract)
    found = executor.execute(ToolCall("c1", "get_order", {"order_id": "ORD-123456"}, "{}"))
    assert found.failure is None
    assert found.result.content == {"ok": True, "status": "in_transit", "city": "Самара"}
    assert found.result.call_id == "c1" and not found.result.is_error
    missing = executor.execute(ToolCall("c2", "get_order", {"order_id": "ORD-000001"}, "{}"))
    assert missing.failure is not None and missing.failure.code == "ORDER_NOT_FOUND"
    assert not missing.failure.retryable and missing.result.is_error
    assert missing.result.content["error"]["code"] == "ORDER_NOT_FOUND"
    quote = executor.execute(
        ToolCall(
            "c3",
            "quote_delivery",
            {"origin": "A", "destination": "B", "weight_kg": 1, "service": "express"},
            "{}",
        )
    )
    assert quote.failure is not None and quote.failure.retryable
    cancel = executor.execute(
        ToolCall("c4", "cancel_order", {"order_id": "ORD-654321", "reason": "other"}, "{}")
    )
    assert cancel.failure is not None and cancel.failure.code == "ALREADY_SHIPPED"


def test_arguments_are_checked_before_any_rule(contract: Contract) -> None:
    executor = load_executor(RESULTS, contract)
    bad = executor.execute(ToolCall("c", "get_order", {"order_id": "ORD-123456", "x": 1}, "{}"))
    assert bad.failure is not None and bad.failure.code == "INVALID_ARGUMENTS"
    raw = executor.execute(ToolCall("c", "get_order", None, "{oops"))
    assert raw.failure is not None and raw.failure.code == "INVALID_ARGUMENTS"
    unknown = executor.execute(ToolCall("c", "track", {}, "{}"))
    assert unknown.failure is not None and unknown.failure.code == "UNKNOWN_TOOL"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"tool": "refund", "result": {}}, "tool 'refund' is not in the contract"),
        ({"tool": "get_order", "result": {}, "error": {}}, "exactly one of"),
        ({"tool": "get_order", "error": {"code": "X", "message": "m"}}, "retryable"),
        ({"tool": "get_order", "result": {}, "delay": 1}, "unknown key 'delay'"),
    ],
)
def test_bad_rules_name_the_file_and_line(
    tmp_path: Path, contract: Contract, rule: dict[str, object], message: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"rules": [{"tool": "get_order", "result": {}}, rule]}, indent=2))
    with pytest.raises(InputError) as caught:
        load_executor(path, contract)
    (problem,) = caught.value.problems
    assert message in problem.message
    assert problem.line is not None and problem.line > 6


def test_a_star_rule_answers_any_tool_after_the_specific_ones(
    tmp_path: Path, contract: Contract
) -> None:
    path = tmp_path / "results.json"
    rules = [
        {"tool": "get_order", "when": {"order_id": "ORD-123456"}, "result": {"city": "A"}},
        {"tool": "*", "result": {"note": "judged, not executed"}},
    ]
    path.write_text(json.dumps({"rules": rules}), encoding="utf-8")
    executor = load_executor(path, contract)
    hit = executor.execute(ToolCall("c1", "get_order", {"order_id": "ORD-123456"}, "{}"))
    assert hit.result.content == {"ok": True, "city": "A"}
    other = executor.execute(
        ToolCall("c2", "cancel_order", {"order_id": "ORD-654321", "reason": "other"}, "{}")
    )
    assert other.failure is None and other.result.content["note"] == "judged, not executed"
    path.write_text(json.dumps({"rules": [{"tool": "nope", "result": {}}]}), encoding="utf-8")
    with pytest.raises(InputError, match=r'or "\*" for any tool'):
        load_executor(path, contract)


def test_a_rule_compares_strings_plainly_and_other_values_canonically(
    tmp_path: Path, contract: Contract
) -> None:
    # Strings on both sides are compared with `==`; anything else as JSON values are
    # (2.0 is 2, "2" is not 2): the plain comparison must agree with the canonical one.
    path = tmp_path / "results.json"
    rules = [
        {"tool": "quote_delivery", "when": {"weight_kg": "2"}, "result": {"rule": "text"}},
        {"tool": "quote_delivery", "when": {"origin": "A", "weight_kg": 2}, "result": {"rule": 2}},
        {"tool": "quote_delivery", "when": {"origin": "a"}, "result": {"rule": "case"}},
        {"tool": "quote_delivery", "when": {"service": "express"}, "result": {"rule": "last"}},
    ]
    path.write_text(json.dumps({"rules": rules}), encoding="utf-8")
    executor = load_executor(path, contract)

    def answered(origin: str, weight: object) -> object:
        arguments = {
            "origin": origin,
            "destination": "B",
            "weight_kg": weight,
            "service": "standard",
        }
        execution = executor.execute(ToolCall("c", "quote_delivery", arguments, "{}"))
        return execution.result.content.get("rule") if execution.failure is None else None

    assert answered("A", 2) == 2
    assert answered("A", 2.0) == 2  # one JSON number
    assert answered("A", 2.5) is None  # no rule: origin "A" is not "a", no service
    assert answered("a", 2) == "case"
    assert answered("B", 2) is None
    express = {"origin": "B", "destination": "C", "weight_kg": 1, "service": "express"}
    hit = executor.execute(ToolCall("c", "quote_delivery", express, "{}"))
    assert hit.failure is None and hit.result.content == {"ok": True, "rule": "last"}
    # A rule naming an argument the call does not give never matches.
    path.write_text(
        json.dumps({"rules": [{"tool": "quote_delivery", "when": {"coupon": "x"}, "result": {}}]}),
        encoding="utf-8",
    )
    sparse = load_executor(path, contract)
    missing = sparse.execute(ToolCall("c", "quote_delivery", express, "{}"))
    assert missing.failure is not None and missing.failure.code == "NO_MATCHING_RULE"
