"""Anthropic lint rules: tool names and the strict tool use subset and limits."""

from __future__ import annotations

import re
from typing import Any

from fcreplay.adapters._openai_lint import OPENAI_FORMATS
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

ANTHROPIC_STRICT = "Anthropic strict tool use"

_ANTHROPIC_STRICT_KEYWORDS = Keywords(
    supported=frozenset(
        {
            "type",
            "enum",
            "const",
            "anyOf",
            "allOf",
            "$ref",
            "$defs",
            "definitions",
            "default",
            "required",
            "additionalProperties",
            "properties",
            "items",
            "format",
            "minItems",
            "description",
            "title",
        }
    ),
    rejected=frozenset(
        {
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minLength",
            "maxLength",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
        }
    ),
    rejected_rule=f"{ANTHROPIC_STRICT}: numeric constraints, string lengths and array "
    "constraints beyond minItems 0 or 1 are not supported (docs/providers.md §4.3)",
    other_level="warning",
    other_rule=f"{ANTHROPIC_STRICT}: {{kw}} is not in the supported list; whether it is "
    "accepted is unconfirmed (docs/providers.md §4.3)",
)
_ANTHROPIC_FORMATS = OPENAI_FORMATS | {"uri"}

ANTHROPIC = Provider(
    label="Anthropic",
    name=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    name_rule="Anthropic tool names: ^[a-zA-Z0-9_-]{1,64}$ (docs/providers.md §1.3, §4.2)",
    max_tools=None,
    max_tools_level="error",
    max_tools_rule="",
)


def check_anthropic(subject: LintSubject) -> Found:
    """What Anthropic strict tool use rejects in the schemas as wired (a note when not strict)."""
    wired = subject.wired
    if not subject.strict:
        yield (
            "note",
            "",
            "strict is off: the schemas guide the model but are not enforced",
            "Anthropic tool use: strict is opt-in per tool (docs/providers.md §4.2, §4.3)",
        )
        return
    optional = unions = 0
    limits_rule = (
        f"{ANTHROPIC_STRICT}: at most 20 strict tools, 24 optional parameters and 16 "
        "parameters using unions per request (docs/providers.md §4.3)"
    )
    if len(wired) > 20:
        yield "error", "", f"{len(wired)} strict tools, more than 20", limits_rule
    for tool, schema in wired:
        root = pointer(tool.name, "parameters")
        for at, node, _ in nodes(schema):
            here = root + pointer(*at)
            yield from keyword_issues(node, here, _ANTHROPIC_STRICT_KEYWORDS)
            yield from _anthropic_node(node, here, at)
            properties = node.get("properties")
            if isinstance(properties, dict):
                required = node.get("required")
                listed = required if isinstance(required, list) else []
                optional += sum(1 for name in properties if name not in listed)
            if "anyOf" in node or isinstance(node.get("type"), list):
                unions += 1
    if optional > 24:
        yield "error", "", f"{optional} optional parameters, more than 24", limits_rule
    if unions > 16:
        yield "error", "", f"{unions} parameters using unions, more than 16", limits_rule


def _anthropic_node(node: dict[str, Any], here: str, at: tuple[str, ...]) -> Found:
    if is_object(node) and node.get("additionalProperties") is not False:
        yield (
            "error",
            here + pointer("additionalProperties"),
            "an object without additionalProperties: false",
            f"{ANTHROPIC_STRICT}: additionalProperties: false is required on every object "
            "(docs/providers.md §4.3)",
        )
    minimum = node.get("minItems")
    if minimum is not None and minimum not in (0, 1):
        yield (
            "error",
            here + pointer("minItems"),
            f"minItems {minimum}",
            f"{ANTHROPIC_STRICT}: minItems may only be 0 or 1 (docs/providers.md §4.3)",
        )
    kind = node.get("format")
    if isinstance(kind, str) and kind not in _ANTHROPIC_FORMATS:
        yield (
            "error",
            here + pointer("format"),
            f"format {kind!r} is not supported",
            f"{ANTHROPIC_STRICT}: string format is one of "
            f"{', '.join(sorted(_ANTHROPIC_FORMATS))} (docs/providers.md §4.3)",
        )
    enum = node.get("enum")
    if isinstance(enum, list) and any(isinstance(v, dict | list) for v in enum):
        yield (
            "error",
            here + pointer("enum"),
            "an enum with object or array values",
            f"{ANTHROPIC_STRICT}: enum values must be primitives (docs/providers.md §4.3)",
        )
    ref = node.get("$ref")
    if isinstance(ref, str) and (not ref.startswith("#") or _is_recursive(ref, at)):
        yield (
            "error",
            here + pointer("$ref"),
            f"$ref {ref!r} is external or recursive",
            f"{ANTHROPIC_STRICT}: no recursive schemas and no external $ref "
            "(docs/providers.md §4.3)",
        )


def _is_recursive(ref: str, at: tuple[str, ...]) -> bool:
    """Whether a local $ref points at the node holding it or one of its ancestors."""
    target = ref[1:]
    here = pointer(*at)
    return here == target or here.startswith(target + "/") or target == ""


ANTHROPIC_RULES = LintRules(
    provider=ANTHROPIC,
    check=check_anthropic,
    strict_transform_rule=f"{ANTHROPIC_STRICT}: unsupported keywords are moved into the "
    "description, as the SDK's transform does (docs/providers.md §4.3)",
)
