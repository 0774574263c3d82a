"""OpenAI's strict-mode (Structured Outputs) schema transform, shared by both OpenAI adapters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import fcreplay.jsoncopy as jsoncopy

_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
"""Keywords whose values map names to subschemas."""
_SCHEMA_KEYS = frozenset(
    {"items", "prefixItems", "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "contains"}
)
"""Keywords whose values are a subschema or a list of them."""
_RESTRICTED = frozenset({"enum", "const", "$ref", "anyOf", "oneOf", "allOf", "not", "if"})
"""Keywords that can reject null whatever `type` says, so a type union cannot make them nullable."""
_NULL: dict[str, Any] = {"type": "null"}


def wire_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """Return the `parameters` schema as sent: an unchanged copy, or in strict form.

    Strict form (providers reference §2.3): every object gets `additionalProperties:
    false` (a schema-valued one is replaced, the one lossy step) and a `properties`
    map, and lists every property in `required`. A property that was optional is
    made nullable so it can still be left out in effect:

    - a plain typed schema gets `"null"` added to its `type` (`["string", "null"]`);
    - a bare `anyOf` gets a `{"type": "null"}` branch;
    - anything else, including a schema restricted by `enum`, `const`, `$ref` or a
      combinator (which a type union would not open to null), or one without a
      type, becomes `anyOf: [schema, {"type": "null"}]`, the original kept whole
      as one branch.

    A schema that already accepts null is left alone, so the transform is
    idempotent. Keywords strict mode may not support (`allOf`, `minLength`...) are
    left in place, so the provider's 400 shows them instead of a constraint
    vanishing silently.
    """
    if not strict:
        return jsoncopy.copied(parameters)
    transformed: dict[str, Any] = _strict(parameters)
    return transformed


def _strict(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return jsoncopy.copied(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _strict(sub) for name, sub in value.items()}
        elif key in _SCHEMA_KEYS:
            out[key] = _strict(value)
        else:
            out[key] = jsoncopy.copied(value)
    if _is_object(out):
        properties = out.setdefault("properties", {})
        if isinstance(properties, dict):
            required = out.get("required")
            listed = list(required) if isinstance(required, list) else []
            optional = [name for name in properties if name not in listed]
            for name in optional:
                properties[name] = _nullable(properties[name])
            out["required"] = listed + optional
        out["additionalProperties"] = False
    return out


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        kind == "object"
        or (isinstance(kind, list) and "object" in kind)
        or (kind is None and "properties" in schema)
    )


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, dict) or _accepts_null(schema):
        return schema  # a boolean schema: true already admits null
    kind = schema.get("type")
    if isinstance(kind, str | list) and not _RESTRICTED & schema.keys():
        return {**schema, "type": [*([kind] if isinstance(kind, str) else kind), "null"]}
    branches = schema.get("anyOf")
    if isinstance(branches, list) and set(schema) == {"anyOf"}:
        return {"anyOf": [*branches, dict(_NULL)]}
    return {"anyOf": [schema, dict(_NULL)]}


def _accepts_null(schema: Mapping[str, Any]) -> bool:
    """Whether `schema` says null is valid: one keyword admits it and none rejects it."""
    kind = schema.get("type")
    typed = kind == "null" or (isinstance(kind, list) and "null" in kind)
    enum = schema.get("enum")
    branches = schema.get("anyOf")
    null_branch = isinstance(branches, list) and any(
        isinstance(branch, dict) and _accepts_null(branch) for branch in branches
    )
    admitted = (
        typed
        or (isinstance(enum, list) and None in enum)
        or ("const" in schema and schema["const"] is None)
        or null_branch
    )
    rejected = (
        (kind is not None and not typed)
        or (isinstance(enum, list) and None not in enum)
        or ("const" in schema and schema["const"] is not None)
        or (isinstance(branches, list) and not null_branch)
        # Whether these let null through is not worth working out: wrapping is safe.
        or not {"$ref", "allOf", "oneOf", "not", "if"}.isdisjoint(schema)
    )
    return admitted and not rejected
