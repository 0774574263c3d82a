"""Gemini tool schemas: `parametersJsonSchema` as sent, and the `parameters` OpenAPI subset."""

from __future__ import annotations

import json
from typing import Any, cast

import fcreplay.jsoncopy as jsoncopy
from fcreplay.keywords import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES
from fcreplay.sources import pointer


def wire_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """Return the JSON Schema sent as `parametersJsonSchema` for `parameters`.

    Only `$schema` is removed (wherever it appears as a keyword): the Gemini
    API rejects it. Gemini has no strict mode, so `strict` changes nothing and
    the transform is the same, reversible-up-to-`$schema` one either way.
    """
    del strict  # no provider-side strict mode to prepare the schema for
    return cast("dict[str, Any]", _without_schema_uri(parameters))


def _without_schema_uri(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return jsoncopy.copied(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$schema":
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _without_schema_uri(sub) for name, sub in value.items()}
        elif key in SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_without_schema_uri(sub) for sub in value]
        elif key in SCHEMA_VALUES:
            out[key] = (
                [_without_schema_uri(sub) for sub in value]
                if isinstance(value, list)
                else _without_schema_uri(value)
            )
        else:
            out[key] = jsoncopy.copied(value)
    return out


_SUBSET_KEPT = frozenset(
    {
        "format",
        "title",
        "description",
        "example",
        "default",
        "required",
        "propertyOrdering",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
    }
)
_SUBSET_HANDLED = frozenset(
    {"type", "enum", "const", "nullable", "properties", "items", "anyOf", "oneOf", "allOf"}
)
_SUBSET_CONSUMED = frozenset({"$defs", "definitions"})
_SUBSET_ONLY = frozenset({"nullable", "propertyOrdering", "property_ordering"})


def to_openapi_subset(schema: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Convert JSON Schema to the `parameters` Schema subset of the Gemini API.

    Types become upper-case names; a type array or an `anyOf` branch of
    `{"type": "null"}` becomes `nullable`; `const` becomes a one-value `enum`;
    number enums become strings with `format: "enum"` (the documented form);
    local `$ref`s are inlined. Keywords outside the subset are dropped and
    returned as `(JSON pointer of the schema in the input, keyword)` pairs, in
    the order met: `additionalProperties`, `$schema`, `exclusiveMinimum`,
    `exclusiveMaximum`, `multipleOf`, `propertyNames`, ... . `oneOf` is sent as
    `anyOf` and listed too, since exclusivity is lost. A cyclic `$ref` is dropped.
    """
    converter = _SubsetConverter(schema)
    converted = converter.convert(schema, "")
    return converted, converter.dropped


class _SubsetConverter:
    """One JSON Schema → OpenAPI-subset conversion, collecting what it drops."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.dropped: list[tuple[str, str]] = []
        self._expanding: list[str] = []

    def drop(self, at: str, keyword: str) -> None:
        if (at, keyword) not in self.dropped:
            self.dropped.append((at, keyword))

    def convert(self, schema: Any, at: str) -> dict[str, Any]:
        if schema is True or schema == {}:
            return {}
        if not isinstance(schema, dict):
            self.drop(at, json.dumps(schema))
            return {}
        base: dict[str, Any] = {}
        ref = schema.get("$ref")
        if ref is not None:
            target = self._resolve(ref)
            if target is None or ref in self._expanding:
                self.drop(at, "$ref")
            else:
                self._expanding.append(ref)
                base = self.convert(target, ref[1:])
                self._expanding.pop()
        plain = self._convert_plain(schema, at)
        return {**base, **plain}

    def _resolve(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        node: Any = self.root
        for raw in ref[1:].split("/")[1:]:
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return None
        return node

    def _convert_plain(self, schema: dict[str, Any], at: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        nullable = schema.get("nullable") is True
        kind = schema.get("type")
        if isinstance(kind, str):
            out["type"] = kind.upper()
        elif isinstance(kind, list):
            named = [str(item).upper() for item in kind if item != "null"]
            nullable = nullable or "null" in kind
            if len(named) == 1:
                out["type"] = named[0]
            elif named:
                out["anyOf"] = [{"type": name} for name in named]
            else:
                out["type"] = "NULL"
        nullable = self._convert_enum(schema, at, out) or nullable
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if not isinstance(branches, list):
                continue
            if keyword == "oneOf":
                self.drop(at, "oneOf")
            kept = []
            for index, branch in enumerate(branches):
                if isinstance(branch, dict) and branch.get("type") == "null" and len(branch) == 1:
                    nullable = True
                else:
                    kept.append(self.convert(branch, at + pointer(keyword, index)))
            if len(kept) == 1 and "anyOf" not in out:
                out.update(kept[0])
            elif kept:
                out["anyOf"] = kept
        everything = schema.get("allOf")
        if isinstance(everything, list):
            if len(everything) == 1:
                out.update(self.convert(everything[0], at + pointer("allOf", 0)))
            else:
                self.drop(at, "allOf")
        properties = schema.get("properties")
        if isinstance(properties, dict):
            out["properties"] = {
                name: self.convert(sub, at + pointer("properties", name))
                for name, sub in properties.items()
            }
        if "items" in schema:
            if isinstance(schema["items"], dict | bool):
                out["items"] = self.convert(schema["items"], at + pointer("items"))
            else:
                self.drop(at, "items")
        for key, value in schema.items():
            if key in _SUBSET_KEPT and key not in out:
                out[key] = jsoncopy.copied(value)
            elif key not in _SUBSET_KEPT | _SUBSET_HANDLED | _SUBSET_CONSUMED and key != "$ref":
                self.drop(at, key)
        if nullable:
            out["nullable"] = True
        return out

    def _convert_enum(self, schema: dict[str, Any], at: str, out: dict[str, Any]) -> bool:
        """Fill `out["enum"]`; return whether a null value made the schema nullable."""
        if "enum" in schema and isinstance(schema["enum"], list):
            keyword, values = "enum", list(schema["enum"])
        elif "const" in schema:
            keyword, values = "const", [schema["const"]]
        else:
            return False
        nullable = None in values
        values = [value for value in values if value is not None]
        if all(isinstance(value, str) for value in values):
            out["enum"] = values
        elif all(
            isinstance(value, int | float) and not isinstance(value, bool) for value in values
        ):
            out["enum"] = [json.dumps(value) for value in values]
            out["format"] = "enum"
        else:
            self.drop(at, keyword)
        return nullable


def from_openapi_subset(schema: Any) -> Any:
    """Read a `parameters` Schema back as JSON Schema (types lower-case, nullable as a union).

    The inverse of `to_openapi_subset` for everything that conversion keeps.
    """
    if not isinstance(schema, dict):
        return jsoncopy.copied(schema)
    out: dict[str, Any] = {}
    numeric_enum = schema.get("format") == "enum" and schema.get("type") in ("INTEGER", "NUMBER")
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out["type"] = value.lower()
        elif key in _SUBSET_ONLY or (key == "format" and numeric_enum):
            continue
        elif key == "enum" and numeric_enum and isinstance(value, list):
            out["enum"] = [json.loads(item) if isinstance(item, str) else item for item in value]
        elif key in ("properties", "defs") and isinstance(value, dict):
            name = "$defs" if key == "defs" else key
            out[name] = {prop: from_openapi_subset(sub) for prop, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = from_openapi_subset(value)
        elif key == "anyOf" and isinstance(value, list):
            out[key] = [from_openapi_subset(sub) for sub in value]
        elif key == "ref" and isinstance(value, str):
            out["$ref"] = value.replace("#/defs/", "#/$defs/")
        else:
            out[key] = jsoncopy.copied(value)
    if schema.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif isinstance(out.get("anyOf"), list):
            out["anyOf"].append({"type": "null"})
        if isinstance(out.get("enum"), list):
            out["enum"].append(None)
    return out
