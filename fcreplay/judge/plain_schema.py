"""Which tool schemas the 2020-12 meta-schema plainly accepts, told by one walk of plain JSON.

jsonschema's meta-schema check follows `$dynamicRef` through seven vocabularies for
every keyword of every subschema: about a millisecond per tool, paid by each check
that does not trust the check cache. A contract's schemas are almost always made of
a few keywords with plain values, and for those the meta-schema's verdict follows
from each keyword's value alone. `plainly_valid` says True only when every keyword
it meets is one whose rule it holds here exactly; anything else (references, ids,
anchors, `dependencies`, values of other Python types than JSON's, floats where an
integer is asked) makes it say False, and the caller asks jsonschema, whose answer
and messages stand. So True never accepts what jsonschema would refuse, and a
schema with problems is always reported by jsonschema itself.

The rules are those of jsonschema-specifications' draft 2020-12 meta-schema and its
vocabularies (core, applicator, unevaluated, validation, meta-data,
format-annotation, content). A keyword none of them declares is not checked by it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fcreplay.keywords import NUMBER_BOUNDS, SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES, SIMPLE_TYPES

# The shared vocabulary, less two older drafts' words: `additionalItems` is no 2020-12
# keyword (any value passes, as for every unknown one), and the meta-schema's own rule
# for `definitions` is left to jsonschema (`_other`).
_SCHEMA = SCHEMA_VALUES - {"additionalItems"}
"""Keywords whose value is a schema."""
_SCHEMA_ARRAY = SCHEMA_LISTS
"""A non-empty array of schemas."""
_SCHEMA_MAP = SCHEMA_MAPS - {"definitions"}
"""An object whose values are schemas."""
_STRING = frozenset(
    {"title", "description", "$comment", "format", "contentEncoding", "contentMediaType"}
)
_BOOLEAN = frozenset({"deprecated", "readOnly", "writeOnly", "uniqueItems"})
_COUNT = frozenset(
    {
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
    }
)
"""A non-negative integer."""
_ANY = frozenset({"const", "default"})
_ARRAY = frozenset({"enum", "examples"})
"""Any array."""
_DEPTH = 64
"""Deeper schemas are left to jsonschema."""


def plainly_valid(schema: Any, is_regex: Callable[[str], bool]) -> bool:
    """Whether `schema` is valid under the 2020-12 meta-schema, told without jsonschema;
    False also when it cannot tell. `is_regex`: the format checker's "regex" format."""
    return _schema(schema, is_regex, 0)


def _schema(schema: Any, is_regex: Callable[[str], bool], depth: int) -> bool:
    if type(schema) is bool:
        return True
    if type(schema) is not dict or depth > _DEPTH:
        return False
    for keyword, value in schema.items():
        if type(keyword) is not str:
            return False
        if keyword in _SCHEMA:
            if not _schema(value, is_regex, depth + 1):
                return False
        elif keyword in _SCHEMA_MAP:
            if type(value) is not dict:
                return False
            for name, inner in value.items():
                if type(name) is not str or not _schema(inner, is_regex, depth + 1):
                    return False
                if keyword == "patternProperties" and not is_regex(name):
                    return False
        elif keyword in _STRING:
            if type(value) is not str:
                return False
        elif keyword in _COUNT:
            if type(value) is not int or value < 0:
                return False
        elif keyword in NUMBER_BOUNDS:
            if type(value) is not int and type(value) is not float:
                return False
        elif keyword in _BOOLEAN:
            if type(value) is not bool:
                return False
        elif keyword in _ANY:
            continue
        elif keyword in _ARRAY:
            if type(value) is not list:
                return False
        elif keyword in _SCHEMA_ARRAY:
            if type(value) is not list or not value:
                return False
            if not all(_schema(inner, is_regex, depth + 1) for inner in value):
                return False
        elif not _other(keyword, value, is_regex):
            return False
    return True


def _other(keyword: str, value: Any, is_regex: Callable[[str], bool]) -> bool:
    if keyword == "type":
        if type(value) is str:
            return value in SIMPLE_TYPES
        return (
            type(value) is list
            and bool(value)
            and all(type(name) is str and name in SIMPLE_TYPES for name in value)
            and len(set(value)) == len(value)
        )
    if keyword == "required":
        return _string_array(value)
    if keyword == "pattern":
        return type(value) is str and is_regex(value)
    if keyword == "multipleOf":
        return (type(value) is int or type(value) is float) and value > 0
    if keyword == "dependentRequired":
        return type(value) is dict and all(_string_array(names) for names in value.values())
    # `$id`, `$ref`, anchors, `$vocabulary`, `definitions`, `dependencies`...: jsonschema's.
    return not keyword.startswith("$") and keyword not in ("definitions", "dependencies")


def _string_array(value: Any) -> bool:
    return (
        type(value) is list
        and all(type(name) is str for name in value)
        and len(set(value)) == len(value)
    )
