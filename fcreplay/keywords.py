"""JSON Schema 2020-12 vocabulary: which keywords hold subschemas, and in what shape."""

from __future__ import annotations

SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
"""Keywords whose value maps names to subschemas."""
SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
"""Keywords whose value is a list of subschemas."""
SCHEMA_VALUES = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "propertyNames",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
"""Keywords whose value is one subschema (`items` may also be a list, draft 4 style)."""
SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
"""The type names `type` takes."""
NUMBER_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
"""Keywords whose value bounds a number."""
