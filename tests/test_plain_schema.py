"""The meta-schema check's plain walk accepts nothing jsonschema refuses, and changes no message."""

from __future__ import annotations

import copy
import functools
import importlib
import json
import math
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fcreplay.judge.plain_schema import plainly_valid
from fcreplay.judge.schema import _is_regex, _sort_key, meta_schema_problems
from fcreplay.sources import pointer

ROOT = Path(__file__).resolve().parents[1]


def _jsonschema_alone(schema: Any) -> list[tuple[str, str]]:
    """What `meta_schema_problems` said before the plain walk: a fresh validator each time."""
    meta = Draft202012Validator(
        Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    errors = sorted(meta.iter_errors(schema), key=_sort_key)
    return [(pointer(*error.absolute_path), error.message) for error in errors]


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.5, math.inf, math.nan, 1e-05]),
    st.sampled_from(["", "string", "object", "integer", "numbr", "^[A-Z]{2}$", "[0-9", "a"]),
)
_NAMES = st.sampled_from(["a", "b", "city", "^x", "[bad", "type", "properties", "(?P<n>a)"])
_TYPES = st.sampled_from(["array", "boolean", "integer", "null", "number", "object", "string"])
_GROUPS: list[tuple[tuple[str, ...], Any]] = [
    (("items", "contains", "additionalProperties", "propertyNames", "if", "then", "else",
      "not", "unevaluatedItems", "unevaluatedProperties", "contentSchema"), "schema"),
    (("prefixItems", "allOf", "anyOf", "oneOf"), "schemas"),
    (("properties", "patternProperties", "dependentSchemas", "$defs", "definitions"), "map"),
    (("title", "description", "$comment", "format", "contentEncoding", "contentMediaType",
      "$ref", "$id", "$schema", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
      "$recursiveAnchor"), st.sampled_from(["", "x", "#/$defs/a", "https://e.org/s#f", "a b"])),
    (("deprecated", "readOnly", "writeOnly", "uniqueItems"), st.booleans() | st.just(0)),
    (("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"),
     st.integers(-5, 5) | st.sampled_from([0.5, -2.0, math.inf, True])),
    (("minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains",
      "minProperties", "maxProperties"), st.integers(-1, 5) | st.sampled_from([1.0, True, "1"])),
    (("multipleOf",), st.sampled_from([0, 1, 2.5, -1, 0.0, True, math.nan, math.inf])),
    (("pattern",), st.sampled_from(["^a$", "[0-9", "a+", "(?P<x>a)", "\\d{2}", "*"])),
    (("type",), _TYPES | st.lists(_TYPES, max_size=3) | st.just("numbr")),
    (("required",), st.lists(_NAMES, max_size=3) | st.just([1])),
    (("dependentRequired", "dependencies"), st.dictionaries(_NAMES, st.lists(_NAMES, max_size=2))),
    (("enum", "examples", "const", "default", "$vocabulary", "x-custom", "nullable"), "any"),
]  # fmt: skip


def _value(kind: Any, children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    if kind == "schema":
        return children
    if kind == "schemas":
        return st.lists(children, max_size=3)
    if kind == "map":
        return st.dictionaries(_NAMES, children, max_size=3)
    if kind == "any":
        return _SCALARS | st.lists(_SCALARS, max_size=3)
    strategy: st.SearchStrategy[Any] = kind
    return strategy


def _keywords(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A keyword with a value mostly of the shape its rule asks for, sometimes any value."""
    pairs = [
        st.tuples(
            st.sampled_from(names),
            st.integers(0, 7).flatmap(
                lambda roll, kind=kind: _value("any" if roll == 0 else kind, children)
            ),
        )
        for names, kind in _GROUPS
    ]
    return st.lists(st.one_of(pairs), max_size=5).map(dict)


_SCHEMAS = st.recursive(st.booleans() | st.just({}), _keywords, max_leaves=12)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SCHEMAS)
def test_the_plain_walk_accepts_only_what_jsonschema_accepts(schema: Any) -> None:
    expected = _jsonschema_alone(schema)
    if plainly_valid(schema, _is_regex):
        assert expected == [], schema
    assert meta_schema_problems(schema) == expected


def _dicts(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value, *(d for inner in value.values() for d in _dicts(inner))]
    if isinstance(value, list):
        return [d for inner in value for d in _dicts(inner)]
    return []


@st.composite
def _edited_contract_schemas(draw: st.DrawFn) -> Any:
    """A schema of the repository's contracts with one keyword set somewhere in it."""
    schema = copy.deepcopy(draw(st.sampled_from(_contract_schemas())))
    place = draw(st.sampled_from(_dicts(schema)))
    edit = draw(_keywords(_SCHEMAS).filter(bool))
    place.update(edit)
    return schema


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_edited_contract_schemas())
def test_an_edited_contract_schema_gets_jsonschema_s_verdict(schema: Any) -> None:
    expected = _jsonschema_alone(schema)
    if plainly_valid(schema, _is_regex):
        assert expected == [], schema
    assert meta_schema_problems(schema) == expected


@functools.cache
def _contract_schemas() -> list[Any]:
    """The tool schemas of the repository's contracts and of the benchmark's 20 tools."""
    files = [ROOT / "contracts", ROOT / "examples", ROOT / "fcreplay" / "templates"]
    documents = [
        json.loads(path.read_text(encoding="utf-8"))
        for folder in files
        for path in sorted(folder.glob("**/*.json"))
    ]
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        documents.append(importlib.import_module("domain").contract_json())
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return [
        tool["parameters"]
        for document in documents
        if isinstance(document, list)
        for tool in document
        if isinstance(tool, dict) and "parameters" in tool
    ]


def test_the_repository_s_contracts_take_the_plain_walk_and_keep_their_verdict() -> None:
    schemas = _contract_schemas()
    assert len(schemas) >= 25
    for schema in schemas:
        assert meta_schema_problems(schema) == _jsonschema_alone(schema)
    example = json.loads((ROOT / "contracts" / "delivery_tools.json").read_text(encoding="utf-8"))
    assert all(plainly_valid(tool["parameters"], _is_regex) for tool in example)


def test_what_the_walk_leaves_to_jsonschema_is_reported_by_it() -> None:
    cases: list[Any] = [
        {"type": "numbr"},
        {"type": ["string", "string"]},
        {"properties": {"a": {"minLength": -1}}},
        {"properties": {"a": {"minLength": 1.0}}},  # an integer to jsonschema, not to the walk
        {"pattern": "[0-9"},
        {"patternProperties": {"[bad": {}}},
        {"required": ["a", "a"]},
        {"items": [{"type": "string"}]},
        {"allOf": []},
        {"multipleOf": 0},
        {"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}},
        {"$id": "https://example.com/a#frag"},
        {"dependencies": {"a": ["b"], "c": {"type": "object"}}},
        {"enum": "a"},
        {"properties": {"a": {"type": "object", "properties": {"b": {"maxItems": "3"}}}}},
    ]
    for schema in cases:
        assert meta_schema_problems(schema) == _jsonschema_alone(schema), schema
    assert not plainly_valid({"minLength": 1.0}, _is_regex)
    assert plainly_valid({"type": "object", "properties": {"a": {"pattern": "^a$"}}}, _is_regex)
