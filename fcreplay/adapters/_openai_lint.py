"""OpenAI lint rules (Chat and Responses): function names, tool count, Structured Outputs."""

from __future__ import annotations

import re
from typing import Any

from fcreplay.lint.rules import (
    Found,
    Keywords,
    LintRules,
    LintSubject,
    Provider,
    is_object,
    keyword_issues,
    nodes,
)
from fcreplay.sources import pointer

OPENAI_SO = "OpenAI Structured Outputs"

_OPENAI_STRICT_KEYWORDS = Keywords(
    supported=frozenset(
        {
            "type",
            "enum",
            "anyOf",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "$defs",
            "definitions",
            "$ref",
            "description",
            "title",
            "pattern",
            "format",
            "multipleOf",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minItems",
            "maxItems",
        }
    ),
    rejected=frozenset(
        {"allOf", "not", "dependentRequired", "dependentSchemas", "if", "then", "else"}
    ),
    rejected_rule=f"{OPENAI_SO}: allOf, not, dependentRequired, dependentSchemas and "
    "if/then/else are not supported (docs/providers.md §2.3)",
    other_level="warning",
    other_rule=f"{OPENAI_SO}: {{kw}} is not in the supported list; whether strict mode "
    "accepts it is unconfirmed (docs/providers.md §2.3, §10)",
)
_OPENAI_FINE_TUNED = frozenset(
    {
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "multipleOf",
        "patternProperties",
        "minItems",
        "maxItems",
    }
)
OPENAI_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

OPENAI = Provider(
    label="OpenAI",
    name=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    name_rule="OpenAI function names: a-z, A-Z, 0-9, _ and -, at most 64 (docs/providers.md §1.3)",
    max_tools=128,
    max_tools_level="error",
    max_tools_rule="OpenAI: at most 128 tools per request, array_above_max_length [obs] "
    "(docs/providers.md §1.3)",
)


def lint_openai(subject: LintSubject) -> Found:
    """What OpenAI rejects or may ignore in the schemas as wired (strict rules when strict)."""
    if not subject.strict:
        yield (
            "note",
            "",
            "strict is off: the schemas guide the model but are not enforced",
            "OpenAI function calling: strict defaults to false (docs/providers.md §2.2)",
        )
    for tool in subject.tools:
        if len(tool.description) > 1024:
            yield (
                "warning",
                pointer(tool.name, "description"),
                f"description is {len(tool.description)} characters long",
                "OpenAI: descriptions over 1024 characters were rejected in one report "
                "[obs, unconfirmed] (docs/providers.md §1.3, §10)",
            )
    if not subject.strict:
        return
    if subject.parallel is not False:
        yield (
            "warning",
            "",
            "strict schemas with parallel calls allowed (parallel_tool_calls is not false)",
            "OpenAI: strict mode is disabled for parallel calls of fine-tuned models; set "
            "parallel_tool_calls = false when you rely on it (docs/providers.md §2.3)",
        )
    fine_tuned = subject.model.startswith("ft:")
    totals = {"properties": 0, "enum": 0}
    for tool, schema in subject.wired:
        root = pointer(tool.name, "parameters")
        if schema.get("type") != "object" or "anyOf" in schema:
            yield (
                "error",
                root,
                "the root schema is not a plain object",
                f"{OPENAI_SO}: the root must be type object and not anyOf (docs/providers.md §2.3)",
            )
        for at, node, depth in nodes(schema):
            here = root + pointer(*at)
            if depth > 10:
                yield (
                    "error",
                    here,
                    f"nested {depth} levels deep",
                    f"{OPENAI_SO}: at most 10 levels of nesting (docs/providers.md §2.3)",
                )
            yield from keyword_issues(node, here, _OPENAI_STRICT_KEYWORDS)
            yield from _openai_node(node, here, fine_tuned)
            properties = node.get("properties")
            totals["properties"] += len(properties) if isinstance(properties, dict) else 0
            enum = node.get("enum")
            totals["enum"] += len(enum) if isinstance(enum, list) else 0
    limits = {"properties": 5000, "enum": 1000}
    for what, count in totals.items():
        if count > limits[what]:
            yield (
                "error",
                "",
                f"{count} {what} values in all strict schemas",
                f"{OPENAI_SO}: at most 5000 object properties and 1000 enum values "
                "(docs/providers.md §2.3)",
            )


def _openai_node(node: dict[str, Any], here: str, fine_tuned: bool) -> Found:
    if is_object(node):
        if node.get("additionalProperties") is not False:
            yield (
                "error",
                here + pointer("additionalProperties"),
                "an object without additionalProperties: false",
                f"{OPENAI_SO}: every object needs additionalProperties: false "
                "(docs/providers.md §2.3)",
            )
        properties = node.get("properties")
        required = node.get("required")
        names = list(properties) if isinstance(properties, dict) else []
        listed = required if isinstance(required, list) else []
        missing = [name for name in names if name not in listed]
        if missing:
            yield (
                "error",
                here + pointer("required"),
                f"properties not listed in required: {', '.join(missing)}",
                f"{OPENAI_SO}: every property must be listed in required; make optional "
                "ones nullable (docs/providers.md §2.3)",
            )
    kind = node.get("format")
    if isinstance(kind, str) and kind not in OPENAI_FORMATS:
        yield (
            "warning",
            here + pointer("format"),
            f"format {kind!r} is not one strict mode supports",
            f"{OPENAI_SO}: format is one of {', '.join(sorted(OPENAI_FORMATS))} "
            "(docs/providers.md §2.3)",
        )
    enum = node.get("enum")
    if (
        isinstance(enum, list)
        and len(enum) > 250
        and sum(len(v) for v in enum if isinstance(v, str)) > 15000
    ):
        yield (
            "error",
            here + pointer("enum"),
            "a string enum of more than 250 values longer than 15,000 characters",
            f"{OPENAI_SO}: enum size limits (docs/providers.md §2.3)",
        )
    if fine_tuned:
        for keyword in sorted(_OPENAI_FINE_TUNED & set(node)):
            yield (
                "error",
                here + pointer(keyword),
                f"{keyword} with a fine-tuned model (ft:...)",
                f"{OPENAI_SO}: fine-tuned models do not support minLength, maxLength, "
                "pattern, format, minimum, maximum, multipleOf, patternProperties, minItems, "
                "maxItems (docs/providers.md §2.3)",
            )


OPENAI_RULES = LintRules(
    provider=OPENAI,
    check=lint_openai,
    strict_transform_rule=f"{OPENAI_SO}: the strict transform makes every object "
    "additionalProperties: false and optional properties required and nullable "
    "(docs/providers.md §2.3)",
)
"""Declared by both OpenAI adapters (Chat Completions and Responses)."""
