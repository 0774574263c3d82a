"""Gemini lint rules: function and property names, tool count, the JSON Schema subset."""

from __future__ import annotations

import json
import re

from fcreplay.adapters._gemini_schema import to_openapi_subset
from fcreplay.lint.rules import (
    Found,
    Keywords,
    LintRules,
    LintSubject,
    Provider,
    keyword_issues,
    nodes,
)
from fcreplay.sources import pointer

_GEMINI_JSON_KEYWORDS = Keywords(
    supported=frozenset(
        {
            "$id",
            "$defs",
            "$ref",
            "$anchor",
            "type",
            "format",
            "title",
            "description",
            "enum",
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
            "minimum",
            "maximum",
            "anyOf",
            "oneOf",
            "properties",
            "additionalProperties",
            "required",
            "propertyOrdering",
        }
    ),
    rejected=frozenset(),
    rejected_rule="",
    other_level="warning",
    other_rule="Gemini parametersJsonSchema: {kw} is outside the documented subset; whether "
    "it is ignored (not enforced) or rejected is unconfirmed (docs/providers.md §5.3, §10)",
)

GEMINI = Provider(
    label="Gemini",
    name=re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$"),
    name_rule="Gemini function names: start with a letter or _, then letters, digits, _ . - "
    "(and : since 2025-12), at most 64 (128 since 2026-05) (docs/providers.md §1.3)",
    max_tools=128,
    max_tools_level="warning",
    max_tools_rule="Vertex AI documents at most 128 function declarations per request "
    "(docs/providers.md §1.3)",
    legacy_name=lambda name: len(name) <= 64 and ":" not in name,
    legacy_name_message="older Gemini API versions refuse it (a colon before 2025-12, more "
    "than 64 characters before 2026-05)",
)


def check_gemini(subject: LintSubject) -> Found:
    """What Gemini ignores or rejects in the schemas as wired, and settings it cannot carry."""
    parallel = subject.parallel
    if subject.strict:
        yield (
            "warning",
            "",
            "strict = true changes nothing: Gemini has no strict flag",
            "Gemini: function declarations have no strict flag (docs/providers.md §5.3)",
        )
    if parallel is not None:
        yield (
            "warning",
            "",
            f"parallel_tool_calls = {json.dumps(parallel)} is not sent: the model may "
            "still answer with several calls at once",
            "Gemini: no parallel-call toggle [unconfirmed] (docs/providers.md §1.1, §5.4)",
        )
    property_name = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]{0,63}$")
    for tool, schema in subject.wired:
        root = pointer(tool.name, "parameters")
        for at, node, _ in nodes(schema):
            here = root + pointer(*at)
            yield from keyword_issues(node, here, _GEMINI_JSON_KEYWORDS)
            ref = node.get("$ref")
            siblings = sorted(k for k in node if not k.startswith("$"))
            if ref is not None and siblings:
                yield (
                    "error",
                    here,
                    f"$ref with sibling keywords {', '.join(siblings)}",
                    "Gemini parametersJsonSchema: a subschema with $ref may only have other "
                    "$-keywords (docs/providers.md §5.3)",
                )
            properties = node.get("properties")
            for name in properties if isinstance(properties, dict) else ():
                if not property_name.match(name):
                    yield (
                        "warning",
                        here + pointer("properties", name),
                        f"property name {name!r} is refused in Gemini's Schema",
                        "Gemini: property names start with a letter or _, then "
                        "[a-zA-Z0-9_], at most 64 (docs/providers.md §1.3)",
                    )
    # The `parameters` subset matters only when declarations go out in it; a request
    # that reads back as the contract sent them as full JSON Schema.
    if not subject.carried:
        return
    for tool in subject.tools:
        for at, keyword in to_openapi_subset(tool.parameters)[1]:
            yield (
                "note",
                pointer(tool.name, "parameters") + at + pointer(keyword),
                f"{keyword} would be dropped by the `parameters` (OpenAPI subset) form; that "
                "subset applies only to `parameters`, and this adapter sends "
                "`parametersJsonSchema`, which carries it",
                "Gemini parameters: an OpenAPI 3.0 subset that rejects additionalProperties, "
                "exclusiveMinimum, multipleOf, const... (docs/providers.md §5.3)",
            )


GEMINI_RULES = LintRules(provider=GEMINI, check=check_gemini)
