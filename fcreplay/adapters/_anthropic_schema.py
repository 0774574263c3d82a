"""Anthropic's strict tool-use schema transform, as anthropic-sdk-python rewrites schemas."""

from __future__ import annotations

from typing import Any

import fcreplay.jsoncopy as jsoncopy

_STRICT_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def wire_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """Return the `input_schema` sent for `parameters`, with the strict transform if asked.

    Without strict the schema goes out unchanged. With strict it is rewritten the
    way anthropic-sdk-python's `transform_schema` (2.14.0) rewrites schemas, key for
    key, because that is the shape Anthropic's own client sends:

    - every object gets `additionalProperties: false` (any other value is dropped)
      and a `properties` map; `required` is kept;
    - `oneOf` becomes `anyOf`; of `anyOf`/`oneOf`/`allOf` only the first present is kept;
    - a primitive `enum` or `const` replaces `type`;
    - string `format` is kept when the API supports it; array `minItems` when 0 or 1;
      `items`, `$defs`, `$ref` (alone, siblings dropped), `description`, `title` are kept;
    - every other keyword (minimum, maximum, exclusive*, multipleOf, minLength,
      maxLength, pattern, minItems > 1, maxItems, uniqueItems, default, other
      formats, ...) is removed and appended to the description as
      `"\\n\\n{minimum: 1, maximum: 10}"` (Python `str` of each value, as the SDK does).

    The transform is lossy: schema diff reports it as a documented difference.
    Where the SDK raises (a node without type, enum, const or combinator; a
    boolean schema; a list of types) this function keeps the node as far as it can.
    """
    if not strict:
        return jsoncopy.copied(parameters)
    return _strict_schema(parameters)


def _strict_node(node: Any) -> Any:
    return _strict_schema(node) if isinstance(node, dict) else jsoncopy.copied(node)


def _strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    rest = dict(schema)
    out: dict[str, Any] = {}
    defs = rest.pop("$defs", None)
    if isinstance(defs, dict):
        out["$defs"] = {name: _strict_node(node) for name, node in defs.items()}
    ref = rest.pop("$ref", None)
    if ref is not None:
        out["$ref"] = ref
        return out

    type_ = rest.pop("type", None)
    any_of = rest.pop("anyOf", None)
    one_of = rest.pop("oneOf", None)
    all_of = rest.pop("allOf", None)
    enum = rest.get("enum")
    if isinstance(enum, list) and enum and all(_is_primitive(value) for value in enum):
        out["enum"] = list(rest.pop("enum"))
    if "const" in rest and _is_primitive(rest["const"]):
        out["const"] = rest.pop("const")
    has_literals = "enum" in out or "const" in out
    if has_literals:
        type_ = None

    if isinstance(any_of, list):
        out["anyOf"] = [_strict_node(variant) for variant in any_of]
    elif isinstance(one_of, list):
        out["anyOf"] = [_strict_node(variant) for variant in one_of]
    elif isinstance(all_of, list):
        out["allOf"] = [_strict_node(variant) for variant in all_of]
    elif not has_literals and type_ is not None:
        out["type"] = jsoncopy.copied(type_)

    description = rest.pop("description", None)
    if description is not None:
        out["description"] = description
    title = rest.pop("title", None)
    if title is not None:
        out["title"] = title

    types = set(type_) if isinstance(type_, list) else {type_}
    if "object" in types:
        properties = rest.pop("properties", {})
        if isinstance(properties, dict):
            out["properties"] = {key: _strict_node(node) for key, node in properties.items()}
        rest.pop("additionalProperties", None)
        out["additionalProperties"] = False
        required = rest.pop("required", None)
        if required is not None:
            out["required"] = list(required) if isinstance(required, list) else required
    if "string" in types:
        string_format = rest.pop("format", None)
        if string_format in _STRICT_STRING_FORMATS:
            out["format"] = string_format
        elif string_format:
            rest["format"] = string_format
    if "array" in types:
        items = rest.pop("items", None)
        if isinstance(items, list):
            out["items"] = [_strict_node(item) for item in items]
        elif items is not None:
            out["items"] = _strict_node(items)
        min_items = rest.pop("minItems", None)
        if min_items is not None and (min_items == 0 or min_items == 1):
            out["minItems"] = min_items
        elif min_items is not None:
            rest["minItems"] = min_items

    if rest:
        # The SDK's wording, so a strict request built here matches one built by the SDK.
        leftovers = "{" + ", ".join(f"{key}: {value}" for key, value in rest.items()) + "}"
        previous = out.get("description")
        out["description"] = (previous + "\n\n" if previous is not None else "") + leftovers
    return out


def _is_primitive(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)
