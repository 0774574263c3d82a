"""Argument validation's plain walk gives jsonschema's verdict and messages, or leaves it them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fcreplay.judge.plain_arguments import missing
from fcreplay.judge.schema import ArgumentValidator, Violation, _explain, _path_key

from .test_plain_schema import _contract_schemas


def _jsonschema_alone(schema: Any, instance: Any) -> list[Violation]:
    """What `ArgumentValidator` said before the plain walk: jsonschema's every error."""
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    found: dict[tuple[str, str], Violation] = {}
    for error in validator.iter_errors(instance):
        for violation in _explain(error):
            found.setdefault((violation.pointer, violation.keyword), violation)
    return sorted(found.values(), key=lambda v: (_path_key(v.path), v.keyword))


def _valid_alone(schema: Any, instance: Any) -> bool:
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return bool(validator.is_valid(instance))


def _same(expected: Callable[[], Any], actual: Callable[[], Any]) -> Any:
    """The same value, or the same exception (a schema jsonschema cannot apply)."""
    try:
        value = expected()
    except Exception as exc:
        with pytest.raises(type(exc)):
            actual()
        return None
    assert actual() == value
    return value


def _agrees(schema: Any, instance: Any) -> None:
    validator = ArgumentValidator(schema)
    expected = _same(
        lambda: _jsonschema_alone(schema, instance), lambda: validator.violations(instance)
    )
    valid = _same(lambda: _valid_alone(schema, instance), lambda: validator.is_valid(instance))
    absent = missing(schema, instance)
    if absent is not None:
        assert valid is (not absent), (schema, instance)
        assert all(v.keyword == "required" for v in expected), (schema, instance)


_NAMES = st.sampled_from(["a", "b", "city", "x y", "ORD-1"])
_STRINGS = st.sampled_from(["", "a", "ab", "ORD-123", "x y", "é", "1", "null"])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 60),
    st.sampled_from([0.0, 1.0, 2.5, -1.5, 1e300, math.inf, 3.0]),
    _STRINGS,
)
_JSON = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_NAMES, children, max_size=4),
    max_leaves=10,
)
_TYPES = st.sampled_from(["array", "boolean", "integer", "null", "number", "object", "string"])
_KEYWORDS: list[tuple[tuple[str, ...], Any]] = [
    (("type",), _TYPES | st.lists(_TYPES, min_size=1, max_size=3) | st.just("numbr")),
    (("required",), st.lists(_NAMES, max_size=3)),
    (("enum",), st.lists(_STRINGS, max_size=3) | st.lists(_SCALARS, max_size=3)),
    (("pattern",), st.sampled_from(["^a", "^ORD-[0-9]{3}$", "b", "[0-9", "^$"])),
    (("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"),
     st.integers(-2, 5) | st.sampled_from([0.5, 1e300, math.inf, True, "1"])),
    (("minLength", "maxLength", "minItems", "maxItems"),
     st.integers(0, 3) | st.sampled_from([1.0, True])),
    (("uniqueItems",), st.booleans() | st.just(1)),
    (("title", "description", "default", "examples", "$comment"), _SCALARS),
    (("format",), st.sampled_from(["date", "email", "regex", "unknown"])),
    (("const", "x-custom", "$ref", "minProperties", "not"), _SCALARS),
]  # fmt: skip


def _schemas(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    pairs = [
        st.tuples(st.sampled_from(names), values)
        for names, values in [
            *_KEYWORDS,
            (("properties",), st.dictionaries(_NAMES, children, max_size=3)),
            (("additionalProperties", "items"), children | st.booleans()),
            (("prefixItems", "anyOf"), st.lists(children, min_size=1, max_size=2)),
            (("patternProperties",), st.dictionaries(st.just("^x"), children, max_size=1)),
        ]
    ]
    return st.lists(st.one_of(pairs), max_size=5).map(dict)


_SCHEMA = st.recursive(st.just({}) | st.booleans(), _schemas, max_leaves=8)


@st.composite
def _near(draw: st.DrawFn, schema: Any) -> Any:
    """An instance shaped after `schema` often enough to pass, or to miss one property."""
    if not isinstance(schema, dict) or draw(st.integers(0, 5)) == 0:
        return draw(_JSON)
    if isinstance(schema.get("properties"), dict) or "required" in schema:
        names = [*schema.get("properties", {}), *schema.get("required", [])]
        kept = [n for n in dict.fromkeys(names) if isinstance(n, str) and draw(st.integers(0, 4))]
        props = schema.get("properties", {})
        return {n: draw(_near(props.get(n, {}) if isinstance(props, dict) else {})) for n in kept}
    if isinstance(schema.get("items"), dict):
        return draw(st.lists(_near(schema["items"]), max_size=3))
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return draw(st.sampled_from(schema["enum"]))
    return draw(_JSON)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_schemas_and_instances_get_jsonschema_s_verdict(data: st.DataObject) -> None:
    schema = data.draw(_SCHEMA)
    _agrees(schema, data.draw(_near(schema)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_repository_s_tool_schemas_get_jsonschema_s_verdict(data: st.DataObject) -> None:
    schema = data.draw(st.sampled_from(_contract_schemas()))
    _agrees(schema, data.draw(_near(schema)))


def test_absent_properties_are_told_plainly_with_jsonschema_s_message() -> None:
    schema = {
        "type": "object",
        "properties": {"order": {"type": "object", "required": ["id", "at"]}},
        "required": ["b", "order", "a"],
        "additionalProperties": False,
    }
    instance = {"order": {"note": 1}}
    assert missing(schema, instance) == [(("order",), ["id", "at"]), ((), ["b", "a"])]
    _agrees(schema, instance)
    # Every absent name carries the first one's message, as `_explain` made it.
    found = ArgumentValidator(schema).violations(instance)
    assert [(v.pointer, v.message) for v in found] == [
        ("/a", "'b' is a required property"),
        ("/b", "'b' is a required property"),
        ("/order/at", "'id' is a required property"),
        ("/order/id", "'id' is a required property"),
    ]


def test_what_the_walk_cannot_tell_is_left_to_jsonschema() -> None:
    cases: list[tuple[Any, Any]] = [
        ({"type": "integer"}, 1.0),  # an integer to jsonschema's draft 2020-12
        ({"type": "integer"}, True),
        ({"format": "date"}, "2026-13-01"),
        ({"additionalProperties": False}, {"a": 1}),
        ({"patternProperties": {"^x": {"type": "string"}}}, {"xa": 1}),
        ({"enum": [1, True]}, 1.0),
        ({"uniqueItems": True}, [1, True]),
        ({"minimum": 2}, 1.5),
        ({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {}),
        ({"properties": {"a": {"const": 1}}, "required": ["b"]}, {"a": 2}),
    ]
    for schema, instance in cases:
        _agrees(schema, instance)
    assert missing({"type": "integer"}, 1.0) == []
    assert missing({"format": "date"}, "2026-01-01") is None
    assert missing({"properties": {"a": {"minimum": 2}}, "required": ["b"]}, {"a": 1}) is None
