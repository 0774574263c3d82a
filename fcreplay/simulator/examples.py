"""Example values from a JSON Schema, for simulated calls the cases do not spell out.

Deterministic and small: `const`, then the first `enum` value, `default` or `examples`
entry, else the least value of the type (an object with its required properties, an
empty array, 1 for numbers, "example" for strings). A pattern or format is not
solved, so the value may still break the schema; the simulator only needs something
a careless model could send.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fcreplay.inputs.matchers import pointer_parts


def example(schema: Any) -> Any:
    """A value of the schema's shape (see the module doc for what is chosen)."""
    if not isinstance(schema, Mapping):
        return "example"
    if "const" in schema:
        return schema["const"]
    for key in ("enum", "examples"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return values[0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return example(branches[0])
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        return {name: example(properties.get(name, {})) for name in required}
    if kind == "array":
        count = schema.get("minItems", 0)
        return [example(schema.get("items", {})) for _ in range(count if count < 4 else 1)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return max(1, int(low) + 1) if isinstance(low, int | float) else 1
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "example"


def subschema(schema: Any, where: str) -> Any:
    """The schema of the value at a JSON pointer, following properties and items only."""
    node = schema
    for part in pointer_parts(where):
        if not isinstance(node, Mapping):
            return {}
        properties = node.get("properties")
        if isinstance(properties, Mapping) and part in properties:
            node = properties[part]
        elif part.isdigit() and isinstance(node.get("items"), Mapping):
            node = node["items"]
        else:
            return {}
    return node


def set_at(document: dict[str, Any], where: str, value: Any) -> None:
    """Put `value` at a JSON pointer whose parent exists (objects and list indices)."""
    parts = pointer_parts(where)
    node: Any = document
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
