"""Whether arguments satisfy a tool schema of plain keywords, told by one walk without jsonschema.

A check validates every case's expected arguments and every call's arguments against
its tool's schema; compiling the schemas needs jsonschema, whose import is a sixth of
a check's start. Tool schemas are almost always a few keywords with plain values, and
for those jsonschema's verdict on plain JSON follows from each keyword alone. `missing`
answers only when it is sure: valid, or invalid only by absent required properties (the
one failure whose message it writes as jsonschema does); any other failure, and any
keyword, value or instance type it does not hold here exactly, makes it answer None, and
the caller asks jsonschema, whose answer and messages stand.

The rules are those of jsonschema's draft 2020-12 validator (`_keywords.py`, and the type
checker of drafts 6 and later, where 1.0 is an integer).
"""

from __future__ import annotations

import re
from typing import Any

from fcreplay.keywords import NUMBER_BOUNDS, SIMPLE_TYPES

JsonPath = tuple[str | int, ...]
Missing = list[tuple[JsonPath, list[str]]]
"""Per object that lacks required properties: its path, and those names in `required` order."""

_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment"}
    | {"deprecated", "readOnly", "writeOnly"}
)
"""Keywords that never fail an instance."""
_TYPES: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
_COUNTS = frozenset({"minLength", "maxLength", "minItems", "maxItems"})
_DEPTH = 64
"""Deeper instances are left to jsonschema."""


def missing(schema: Any, instance: Any) -> Missing | None:
    """The required properties `instance` lacks under `schema` ([]: it is valid), or None
    when the walk cannot tell, or `instance` fails in another way."""
    found: Missing = []
    return found if _walk(schema, instance, (), found, 0) else None


def _walk(schema: Any, instance: Any, path: JsonPath, found: Missing, depth: int) -> bool:
    if schema is True:
        return True
    kind = _TYPES.get(type(instance))
    if type(schema) is not dict or kind is None or depth > _DEPTH:
        return False
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        if keyword == "type":
            if not _is_type(instance, kind, value):
                return False
        elif keyword == "properties":
            if type(value) is not dict:
                return False
            if kind == "object":
                for name, inner in value.items():
                    if name in instance and not _walk(
                        inner, instance[name], (*path, name), found, depth + 1
                    ):
                        return False
        elif keyword == "required":
            if type(value) is not list or not all(type(name) is str for name in value):
                return False
            if kind == "object":
                absent = [name for name in value if name not in instance]
                if absent:
                    found.append((path, absent))
        elif keyword == "additionalProperties":
            if not _additional(schema, value, instance, kind, path, found, depth):
                return False
        elif keyword == "items":
            if "prefixItems" in schema or type(value) not in (dict, bool):
                return False
            if kind == "array" and not all(
                _walk(value, item, (*path, index), found, depth + 1)
                for index, item in enumerate(instance)
            ):
                return False
        elif not _holds(keyword, value, instance, kind):
            return False
    return True


def _additional(
    schema: dict[str, Any],
    value: Any,
    instance: Any,
    kind: str,
    path: JsonPath,
    found: Missing,
    depth: int,
) -> bool:
    declared = schema.get("properties", {})
    if "patternProperties" in schema or type(declared) is not dict:
        return False
    if type(value) is bool:
        # Extra properties under `false` fail with a message the walk does not write.
        return value or kind != "object" or all(name in declared for name in instance)
    if type(value) is not dict:
        return False
    return kind != "object" or all(
        _walk(value, instance[name], (*path, name), found, depth + 1)
        for name in instance
        if name not in declared
    )


def _holds(keyword: str, value: Any, instance: Any, kind: str) -> bool:
    """A keyword that looks at the instance alone: True when it surely passes."""
    if keyword == "enum":
        # Strings compare as Python compares them in jsonschema's `equal`.
        return (
            type(value) is list
            and all(type(each) is str for each in value)
            and kind == "string"
            and instance in value
        )
    if keyword == "pattern":
        if type(value) is not str:
            return False
        try:
            return kind != "string" or re.search(value, instance) is not None
        except re.error:
            return False
    if keyword in NUMBER_BOUNDS:
        if type(value) not in (int, float):
            return False
        if kind not in ("integer", "number"):
            return True
        if keyword == "minimum":
            return bool(instance >= value)
        if keyword == "maximum":
            return bool(instance <= value)
        if keyword == "exclusiveMinimum":
            return bool(instance > value)
        return bool(instance < value)
    if keyword in _COUNTS:
        if type(value) is not int:
            return False
        if keyword in ("minLength", "maxLength"):
            if kind != "string":
                return True
        elif kind != "array":
            return True
        return len(instance) >= value if keyword.startswith("min") else len(instance) <= value
    if keyword == "uniqueItems":
        if type(value) is not bool:
            return False
        if not value or kind != "array":
            return True
        return all(type(item) is str for item in instance) and len(set(instance)) == len(instance)
    return False  # `format`, `const`, references, combinators...: jsonschema's


def _is_type(instance: Any, kind: str, value: Any) -> bool:
    names = [value] if type(value) is str else value
    if type(names) is not list or not names:
        return False
    if not all(type(name) is str and name in SIMPLE_TYPES for name in names):
        return False
    for name in names:
        if name == kind or (name == "number" and kind == "integer"):
            return True
        if name == "integer" and kind == "number" and instance.is_integer():
            return True
    return False  # a type failure: jsonschema's message
