"""Case loading: the example cases, and every kind of broken case line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fcreplay.errors import InputError
from fcreplay.inputs.cases import load_cases
from fcreplay.inputs.contract import Contract

from .conftest import CASES

GOOD = {
    "id": "direct_lookup",
    "user": "Где заказ ORD-123456?",
    "expect": {"kind": "tool_call", "tool": "get_order", "arguments": {"order_id": "ORD-123456"}},
}


def test_example_cases_cover_the_seed_and_the_extra_scenarios(contract: Contract) -> None:
    cases = {case.id: case for case in load_cases(CASES, contract)}
    seed = {
        "direct_lookup",
        "missing_id",
        "quote_complete",
        "quote_missing_service",
        "cancel_explicit",
        "cancel_implicit",
        "invalid_id",
    }
    assert seed <= set(cases)
    parallel = cases["two_orders_parallel"].expect
    assert parallel.tools == ("get_order", "get_order")
    assert {c.arguments["order_id"] for c in parallel.calls if c.arguments} == {
        "ORD-123456",
        "ORD-222333",
    }
    assert cases["cancel_duplicate"].expect.calls[0].arguments == {
        "order_id": "ORD-777888",
        "reason": "duplicate",
    }
    assert "2,5 кг" in cases["quote_comma_decimal"].messages[0].content
    assert cases["quote_comma_decimal"].expect.calls[0].arguments["weight_kg"] == 2.5  # type: ignore[index]
    assert set(cases["lookup_and_quote"].expect.tools) == {"get_order", "quote_delivery"}
    assert cases["quote_standard_complete"].expect.calls[0].arguments["service"] == "standard"  # type: ignore[index]
    assert cases["missing_id"].expect.must_not_call


def _error(tmp_path: Path, contract: Contract, *lines: str) -> InputError:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_cases(path, contract)
    return caught.value


def _line(**changes: object) -> str:
    case = {**GOOD, **changes}
    return json.dumps({k: v for k, v in case.items() if v is not None}, ensure_ascii=False)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "a case is a JSON object"),
        (_line(prompt="x"), "unknown key 'prompt'"),
        (_line(id="../etc/passwd"), "case id '../etc/passwd' must match"),
        (_line(id="has space"), "must match"),
        (_line(id=""), "must match"),
        (
            _line(expect={"kind": "tool_call", "tool": "refund_order"}),
            "expects tool 'refund_order', which the contract lacks",
        ),
        (
            _line(
                expect={
                    "kind": "tool_call",
                    "tool": "get_order",
                    "arguments": {"order_id": "123"},
                }
            ),
            "rejected by get_order's own schema",
        ),
        (
            _line(
                expect={
                    "kind": "tool_call",
                    "tool": "quote_delivery",
                    "arguments": {
                        "origin": "A",
                        "destination": "B",
                        "weight_kg": "2.5",
                        "service": "express",
                    },
                }
            ),
            "rejected by quote_delivery's own schema",
        ),
        (_line(expect={"kind": "maybe"}), "kind must be"),
        (_line(expect={"kind": "text", "tools": []}), "unknown key 'tools'"),
        (_line(expect={"kind": "text", "tool": "get_order"}), "only makes sense with kind"),
        (_line(expect=None), 'missing "expect"'),
        (_line(user=None), 'exactly one of "user" or "messages"'),
        (_line(tool_choice={"tool": "nope"}), "tool_choice names tool 'nope'"),
        (_line(tool_choice="sometimes"), "tool_choice must be"),
        (_line(then={"kind": "text", "contains_any": "x"}), "must be a list"),
    ],
)
def test_each_bad_line_is_reported_with_file_and_line(
    tmp_path: Path, contract: Contract, line: str, message: str
) -> None:
    # The bad line is the second one, after a good line, so the number is checked.
    error = _error(tmp_path, contract, _line(id="first"), line)
    (problem,) = error.problems
    assert problem.line == 2
    assert message in problem.message
    assert str(problem).startswith(f"{tmp_path / 'cases.jsonl'}:2: ")


def test_duplicate_id_names_the_first_line(tmp_path: Path, contract: Contract) -> None:
    (problem,) = _error(tmp_path, contract, _line(), "", _line()).problems
    assert problem.line == 3
    assert "duplicate case id 'direct_lookup' (first on line 1)" in problem.message


def test_all_bad_lines_are_reported_together(tmp_path: Path, contract: Contract) -> None:
    error = _error(tmp_path, contract, "{", _line(), "nope", _line(id="a b"))
    assert [p.line for p in error.problems] == [1, 3, 4]


def test_messages_form_and_tool_choice(tmp_path: Path, contract: Contract) -> None:
    path = tmp_path / "cases.jsonl"
    case = {
        "id": "history",
        "messages": [
            {"role": "user", "content": "Привет"},
            {"role": "assistant", "content": "Здравствуйте!"},
            {"role": "user", "content": "Где ORD-123456?"},
        ],
        "tool_choice": {"tool": "get_order"},
        "expect": {"kind": "tool_call", "tool": "get_order"},
    }
    path.write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
    (loaded,) = load_cases(path, contract)
    assert [m.role for m in loaded.messages] == ["user", "assistant", "user"]
    assert loaded.tool_choice.mode == "forced" and loaded.tool_choice.tool == "get_order"
    assert loaded.expect.calls[0].arguments is None
