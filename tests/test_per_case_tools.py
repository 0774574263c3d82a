"""Per-case tool sets: what the requests declare, what the judge accepts, what lint counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fcreplay.decision import Decision, ToolCall
from fcreplay.engine.plan import plan_units, unit_tools
from fcreplay.errors import InputError
from fcreplay.inputs.suite import Suite, load_suite
from fcreplay.judge.expectations import judge_expectation
from fcreplay.lint.suite import lint_suite


def suite_with(tmp_path: Path, tools: int, cases: list[dict[str, Any]]) -> Suite:
    contract = [
        {
            "name": f"tool_{i:03d}",
            "description": f"Tool {i}.",
            "effect": "read",
            "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
        }
        for i in range(tools)
    ]
    (tmp_path / "tools.json").write_text(json.dumps(contract), encoding="utf-8")
    lines = "\n".join(json.dumps(case) for case in cases)
    (tmp_path / "cases.jsonl").write_text(lines + "\n", encoding="utf-8")
    (tmp_path / "fcreplay.toml").write_text(
        'contract = "tools.json"\ncases = "cases.jsonl"\n'
        'variants = ["auto", "forced", "reversed", "no_tools"]\n'
        '[[targets]]\nname = "t"\nadapter = "openai_chat"\nmodel = "m"\n',
        encoding="utf-8",
    )
    return load_suite(tmp_path / "fcreplay.toml")


def call_case(case_id: str, tools: list[str], tool: str) -> dict[str, Any]:
    return {
        "id": case_id,
        "user": case_id,
        "tools": tools,
        "expect": {"kind": "tool_call", "tool": tool},
    }


def test_requests_declare_the_case_tools_in_contract_order(tmp_path: Path) -> None:
    suite = suite_with(tmp_path, 5, [call_case("a", ["tool_003", "tool_001"], "tool_003")])
    units = {unit.variant: unit for unit in plan_units(suite)}
    assert suite.case("a").tools == ("tool_001", "tool_003")
    names = {v: [t.name for t in unit_tools(suite, u)] for v, u in units.items()}
    assert names == {
        "auto": ["tool_001", "tool_003"],
        "forced": ["tool_001", "tool_003"],
        "reversed": ["tool_003", "tool_001"],
        "no_tools": [],
    }


def test_a_call_outside_the_case_tools_is_an_unknown_tool(tmp_path: Path) -> None:
    suite = suite_with(tmp_path, 5, [call_case("a", ["tool_001"], "tool_001")])
    case = suite.case("a")
    contract = suite.contract.restricted(case.tools)
    decision = Decision("tool_call", calls=(ToolCall("c", "tool_002", {}, "{}"),))
    codes = {f.code for f in judge_expectation(decision, case.expect, contract)}
    assert "unknown_tool" in codes
    assert (
        contract.restricted(None) is contract and suite.contract.restricted(None) is suite.contract
    )


def test_lint_counts_the_tools_of_one_request(tmp_path: Path) -> None:
    many = suite_with(tmp_path, 130, [{"id": "a", "user": "a", "expect": {"kind": "text"}}])
    assert any("130 tools declared" in issue.message for issue in lint_suite(many))
    routed = suite_with(tmp_path, 130, [call_case("a", ["tool_001", "tool_002"], "tool_001")])
    assert not any("tools declared" in issue.message for issue in lint_suite(routed))


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            call_case("a", ["tool_009"], "tool_001"),
            "tools names 'tool_009', which the contract lacks",
        ),
        (
            call_case("a", ["tool_001"], "tool_002"),
            "'tool_002' is expected or forced but not in the case's tools",
        ),
        (call_case("a", ["tool_001", "tool_001"], "tool_001"), "lists a tool twice"),
        (
            {"id": "a", "user": "a", "tools": "tool_001", "expect": {"kind": "text"}},
            "tools must be a list",
        ),
    ],
)
def test_bad_tool_sets_are_input_errors(tmp_path: Path, case: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        suite_with(tmp_path, 3, [case])
    assert message in str(caught.value.problems[0])
