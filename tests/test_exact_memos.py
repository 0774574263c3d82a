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
