"""Canonical JSON and the decision signature."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fcreplay.canonical import canonical_json, same_value
from fcreplay.decision import Decision, ToolCall, signature

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


def _shuffle_keys(value: Any, rng: Any) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {key: _shuffle_keys(item, rng) for key, item in items}
    if isinstance(value, list):
        return [_shuffle_keys(item, rng) for item in value]
    return value


@settings(max_examples=200)
@given(JSON, st.randoms(use_true_random=False))
def test_canonical_json_ignores_key_order(value: Any, rng: Any) -> None:
    assert canonical_json(_shuffle_keys(value, rng)) == canonical_json(value)


@settings(max_examples=200)
@given(JSON)
def test_canonical_json_round_trips(value: Any) -> None:
    text = canonical_json(value)
    assert canonical_json(json.loads(text)) == text


def test_canonical_json_has_no_insignificant_whitespace() -> None:
    assert canonical_json({"b": [1, 2], "a": {"c": None}}) == '{"a":{"c":null},"b":[1,2]}'


def test_values_are_never_changed_only_equivalent_numbers_meet() -> None:
    assert not same_value(2.5, "2.5")
    assert not same_value(True, 1)
    assert not same_value({"a": ""}, {})
    assert not same_value(None, {})
    assert same_value(2.0, 2)
    assert same_value({"b": 1, "a": [1, {"y": 2, "x": 3}]}, {"a": [1, {"x": 3, "y": 2}], "b": 1})
    assert canonical_json({"город": "Казань"}) == '{"город":"Казань"}'


def test_signature_sorts_calls_and_canonicalizes_arguments() -> None:
    first = ToolCall("1", "get_order", {"order_id": "ORD-1"}, "")
    second = ToolCall("2", "cancel_order", {"reason": "other", "order_id": "ORD-1"}, "")
    one = Decision("tool_call", calls=(first, second))
    two = Decision("tool_call", calls=(second, first), text="different text is ignored")
    assert signature(one) == signature(two)
    assert signature(one)[:2] == ("tool_call", ("cancel_order", "get_order"))
    changed = Decision(
        "tool_call", calls=(first, ToolCall("2", "cancel_order", {"order_id": "ORD-1"}, ""))
    )
    assert signature(changed) != signature(one)


def test_signature_of_malformed_calls_keeps_the_raw_text() -> None:
    bad_a = Decision("invalid", calls=(ToolCall(None, "get_order", None, '{"order_id": "ORD'),))
    bad_b = Decision("invalid", calls=(ToolCall(None, "get_order", None, '{"order_id'),))
    assert signature(bad_a) != signature(bad_b)
