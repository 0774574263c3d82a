"""structdiff: the walk that skips equal parts finds exactly what deepdiff alone finds."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fcreplay import structdiff
from fcreplay.structdiff import MISSING, Difference, differences

SMALL = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, 2.5])
    | st.text(max_size=2)
)
KEYS = st.sampled_from("abcd")
JSON = st.recursive(
    SMALL,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=20,
)


def _deepdiff_alone(before: Any, after: Any) -> list[Difference]:
    return sorted(structdiff._deepdiff(before, after, ()), key=lambda d: d.path)


def _mutated(value: Any, data: st.DataObject) -> Any:
    """`value` with a few parts replaced, so that most of it stays equal."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {**value, key: _mutated(value[key], data)}
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        change = data.draw(st.sampled_from(["replace", "remove", "insert", "append", "truncate"]))
        if change == "append":
            return [*value, *data.draw(st.lists(JSON, min_size=1, max_size=3))]
        if change == "truncate":
            return value[:index]
        if change == "remove":
            return [*value[:index], *value[index + 1 :]]
        if change == "insert":
            return [*value[:index], data.draw(JSON), *value[index:]]
        return [*value[:index], _mutated(value[index], data), *value[index + 1 :]]
    return data.draw(JSON)


@settings(max_examples=400, deadline=None)
@given(JSON, st.data())
def test_the_walk_finds_what_deepdiff_finds(before: Any, data: st.DataObject) -> None:
    after = _mutated(copy.deepcopy(before), data)
    assert differences(before, after) == _deepdiff_alone(before, after)
    assert differences(after, before) == _deepdiff_alone(after, before)


@settings(max_examples=200, deadline=None)
@given(JSON, JSON)
def test_unrelated_values_too(before: Any, after: Any) -> None:
    assert differences(before, after) == _deepdiff_alone(before, after)


def test_values_equal_to_python_but_not_in_json_are_told_apart() -> None:
    assert differences({"a": [True, {"b": 1}]}, {"a": [1, {"b": 1}]}) == [
        Difference("/a/0", True, 1)
    ]
    assert differences({"a": {"b": 1}}, {"a": {"b": 1.0}}) == []
    assert differences([{"x": 1}], [{"x": 1}, {"y": 2}]) == [Difference("/1", MISSING, {"y": 2})]
    # plain items are aligned (one removal), not paired by index (three changes)
    aligned = differences({"a": ["x", "y", "z"]}, {"a": ["y", "z"]})
    assert aligned == [Difference("/a/0", "x", MISSING)]


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """The pairs of values handed to deepdiff during the test."""
    pairs: list[tuple[Any, Any]] = []
    original = structdiff._deepdiff

    def spy(left: Any, right: Any, at: tuple[Any, ...]) -> list[Difference]:
        pairs.append((left, right))
        return original(left, right, at)

    monkeypatch.setattr(structdiff, "_deepdiff", spy)
    return pairs


def test_equal_declarations_beside_a_change_are_not_handed_to_deepdiff(
    handed: list[tuple[Any, Any]],
) -> None:
    tools = [
        {"name": f"tool_{i}", "parameters": {"type": "object", "properties": {"x": {"minimum": i}}}}
        for i in range(20)
    ]
    messages = [{"role": "user", "content": "hi"}]
    before = {"system": "Be brief.", "tools": tools, "messages": messages}
    after = {**before, "system": "Be brief and polite.", "tools": copy.deepcopy(tools)}
    found = differences(before, after)
    assert found == [Difference("/system", "Be brief.", "Be brief and polite.")]
    assert handed == []  # two strings: told apart without deepdiff


def test_deepdiff_is_left_what_is_not_plain(handed: list[tuple[Any, Any]]) -> None:
    grown = differences({"required": ["a"]}, {"required": ["a", "b"], "type": "object"})
    assert grown == [
        Difference("/required/1", MISSING, "b"),
        Difference("/type", MISSING, "object"),
    ]
    assert differences({"type": "string"}, {"type": ["string", "null"]}) == [
        Difference("/type", "string", ["string", "null"])
    ]
    assert differences([1, 2], [1, 2.0]) == []
    assert handed == [([1, 2], [1, 2.0])]  # a number of another type: deepdiff aligns it
