"""Texts looked up by exact bytes equal the canonical texts they stand for, every time."""

from __future__ import annotations

from typing import Any

import pytest

from fcreplay.adapters._wire import result_text
from fcreplay.canonical import canonical_json
from fcreplay.decision import Decision, ToolCall, signature

VALUES: list[dict[str, Any]] = [
    {"ok": True, "n": 1},
    {"ok": True, "n": 1.0},
    {"ok": True, "n": True},
    {"n": 1, "ok": True},
    {"ok": False, "error": {"z": [1, {"b": 2, "a": None}], "code": "X"}},
]


@pytest.mark.parametrize("value", VALUES)
def test_a_tool_result_text_is_its_canonical_json_again_and_again(value: dict[str, Any]) -> None:
    want = canonical_json(value)
    assert [result_text(value), result_text(dict(value))] == [want, want]


def test_a_non_finite_number_is_refused_as_before() -> None:
    with pytest.raises(ValueError):
        result_text({"n": float("nan")})


def test_signatures_tell_apart_what_canonical_json_tells_apart() -> None:
    def of(arguments: dict[str, Any]) -> Any:
        return signature(Decision("tool_call", calls=(ToolCall("c", "f", arguments, ""),)))

    made = [of(value) for value in VALUES for _ in range(2)]
    assert made == [
        ("tool_call", ("f",), f"[{canonical_json(v)}]") for v in VALUES for _ in range(2)
    ]


def test_judging_keys_tell_a_missing_text_from_any_text() -> None:
    from fcreplay.judge.expectations import _judged_key

    call = (ToolCall("c", "f", {"a": 1}, '{"a": 1}'),)
    keys = [
        _judged_key(Decision("tool_call", None, call), False),
        _judged_key(Decision("tool_call", "", call), False),
        _judged_key(Decision("tool_call", "null", call), False),
        _judged_key(Decision("tool_call", None, call), True),
        _judged_key(Decision("text", None), False),
        _judged_key(Decision("text", "null"), False),
    ]
    assert None not in keys and len(set(keys)) == len(keys)


@pytest.mark.parametrize("text", [None, "null", "a"])
def test_a_call_that_may_hold_nan_is_judged_without_a_key(text: str | None) -> None:
    from fcreplay.judge.expectations import _judged_key

    nan = (ToolCall("c", "f", {"a": float("nan")}, '{"a": NaN}'),)
    plain_null = (ToolCall("c", "f", {"a": None}, '{"a": null}'),)
    assert _judged_key(Decision("tool_call", text, nan), False) is None
    assert _judged_key(Decision("tool_call", text, plain_null), False) is not None


def test_judging_again_gives_what_judging_afresh_gives(contract: Any) -> None:
    from fcreplay.inputs.cases import Expectation, ExpectedCall
    from fcreplay.judge import expectations

    expected = Expectation("tool_call", calls=(ExpectedCall("get_order"),))
    decisions = [
        Decision("tool_call", text, (ToolCall("c", name, arguments, "{}"),))
        for text in (None, "null", "")
        for name, arguments in (
            ("get_order", {"order_id": "ORD-123456"}),
            ("get_order", {"order_id": None}),
            ("cancel_order", {"order_id": "ORD-123456"}),
        )
    ]
    fresh = []
    for decision in decisions:
        expectations._JUDGED.clear()
        fresh.append(expectations.judge_expectation(decision, expected, contract))
    again = [expectations.judge_expectation(d, expected, contract) for d in decisions * 2]
    assert again == fresh * 2
