"""Provider compatibility: what each target's provider rejects, ignores or transforms.

For every configured target, the contract is checked as that target's adapter
sends it (`wire_schema` with the target's strict flag, and the tools read back
from a request the adapter builds) against the provider rules in
`providers.md`:

- error: the provider would reject the request (HTTP 400): a keyword its
  strict subset does not support, a broken strict invariant, a tool name it
  refuses, more tools than it takes. `fcreplay lint` exits 1.
- warning: the request is accepted but the contract is not carried or not
  enforced as written: a keyword the provider may ignore or whose acceptance is
  unconfirmed, a constraint the adapter's transform moves or drops, a setting
  the provider has no knob for. Never fails lint.
- note: worth knowing, nothing to do (e.g. Gemini's `parameters` subset, which
  this adapter does not use).

Each issue cites the rule it comes from, e.g. "OpenAI Structured Outputs: every
object needs additionalProperties: false (providers.md §2.3)".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .adapters import Adapter, get_adapter
from .config import Target
from .contract import ToolSpec
from .exchange import Message, RequestSettings, ToolChoice
from .jsonsource import pointer
from .schemadrift import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES, show_value, tool_drifts
from .suite import Suite

Level = Literal["error", "warning", "note"]
LEVELS: tuple[Level, ...] = ("error", "warning", "note")
Found = Iterator[tuple[Level, str, str, str]]
"""(level, pointer, message, rule) of the issues one check finds."""


@dataclass(frozen=True)
class CompatIssue:
    """One thing a target's provider would reject, ignore or change in the contract."""

    target: str
    level: Level
    pointer: str
    """`/<tool>/parameters/...`, `/<tool>` for a whole tool, "" for the whole request."""
    message: str
    rule: str
    """The provider rule, cited: "<provider rule> (providers.md §N)"."""

    def __str__(self) -> str:
        where = self.pointer or "(request)"
        return f"{self.level}: {self.target}: {where}: {self.message} [{self.rule}]"

    def to_json(self) -> dict[str, str]:
        """The issue as a JSON object."""
        return {
            "target": self.target,
            "level": self.level,
            "pointer": self.pointer,
            "message": self.message,
            "rule": self.rule,
        }


# --- provider rules ------------------------------------------------------------------------

_OPENAI_SO = "OpenAI Structured Outputs"
_ANTHROPIC_STRICT = "Anthropic strict tool use"


@dataclass(frozen=True)
class _Keywords:
    """Which schema keywords one provider mode supports, rejects, or leaves unconfirmed."""

    supported: frozenset[str]
    rejected: frozenset[str]
    rejected_rule: str
    other_level: Level
    other_rule: str
    """For keywords in neither list; `{kw}` is replaced by the keyword."""


_OPENAI_STRICT_KEYWORDS = _Keywords(
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
    rejected_rule=f"{_OPENAI_SO}: allOf, not, dependentRequired, dependentSchemas and "
    "if/then/else are not supported (providers.md §2.3)",
    other_level="warning",
    other_rule=f"{_OPENAI_SO}: {{kw}} is not in the supported list; whether strict mode "
    "accepts it is unconfirmed (providers.md §2.3, §10)",
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
_OPENAI_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_ANTHROPIC_STRICT_KEYWORDS = _Keywords(
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
    rejected_rule=f"{_ANTHROPIC_STRICT}: numeric constraints, string lengths and array "
    "constraints beyond minItems 0 or 1 are not supported (providers.md §4.3)",
    other_level="warning",
    other_rule=f"{_ANTHROPIC_STRICT}: {{kw}} is not in the supported list; whether it is "
    "accepted is unconfirmed (providers.md §4.3)",
)
_ANTHROPIC_FORMATS = _OPENAI_FORMATS | {"uri"}
_GEMINI_JSON_KEYWORDS = _Keywords(
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
    "it is ignored (not enforced) or rejected is unconfirmed (providers.md §5.3, §10)",
)


@dataclass(frozen=True)
class _Provider:
    """Rules that hold for one provider whatever the strict flag."""

    label: str
    name: re.Pattern[str]
    name_rule: str
    max_tools: int | None
    max_tools_level: Level
    max_tools_rule: str


_OPENAI = _Provider(
    label="OpenAI",
    name=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    name_rule="OpenAI function names: a-z, A-Z, 0-9, _ and -, at most 64 (providers.md §1.3)",
    max_tools=128,
    max_tools_level="error",
    max_tools_rule="OpenAI: at most 128 tools per request, array_above_max_length [obs] "
    "(providers.md §1.3)",
)
_ANTHROPIC = _Provider(
    label="Anthropic",
    name=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    name_rule="Anthropic tool names: ^[a-zA-Z0-9_-]{1,64}$ (providers.md §1.3, §4.2)",
    max_tools=None,
    max_tools_level="error",
    max_tools_rule="",
)
_GEMINI = _Provider(
    label="Gemini",
    name=re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$"),
    name_rule="Gemini function names: start with a letter or _, then letters, digits, _ . - "
    "(and : since 2025-12), at most 64 (128 since 2026-05) (providers.md §1.3)",
    max_tools=128,
    max_tools_level="warning",
    max_tools_rule="Vertex AI documents at most 128 function declarations per request "
    "(providers.md §1.3)",
)
_PROVIDERS = {
    "openai_chat": _OPENAI,
    "openai_responses": _OPENAI,
    "anthropic": _ANTHROPIC,
    "gemini": _GEMINI,
}


# --- checks ----------------------------------------------------------------------------------


def check_suite(suite: Suite) -> list[CompatIssue]:
    """Issues of every configured target, in configuration order."""
    tools = list(suite.contract.tools)
    return [
        issue
        for target in suite.config.targets
        for issue in check_target(
            target, tools, parallel_tool_calls=suite.config.parallel_tool_calls
        )
    ]


def check_target(
    target: Target, tools: Sequence[ToolSpec], *, parallel_tool_calls: bool | None = None
) -> list[CompatIssue]:
    """What `target`'s provider rejects, ignores or transforms in `tools`, errors first."""
    adapter = get_adapter(target.adapter)
    found: list[tuple[Level, str, str, str]] = []
    provider = _PROVIDERS.get(target.adapter)
    if provider is not None:
        found += _names_and_counts(provider, tools)
    changed = list(_transforms(target, adapter, tools, parallel_tool_calls))
    found += changed
    wired = [(tool, adapter.wire_schema(tool.parameters, target.strict)) for tool in tools]
    if provider is _OPENAI:
        found += _openai(target, tools, wired, parallel_tool_calls)
    elif provider is _ANTHROPIC:
        found += _anthropic(target, wired)
    elif provider is _GEMINI:
        found += _gemini(target, tools, wired, parallel_tool_calls, carried=not changed)
    issues = [CompatIssue(target.name, *item) for item in found]
    return sorted(issues, key=lambda issue: LEVELS.index(issue.level))


def _names_and_counts(provider: _Provider, tools: Sequence[ToolSpec]) -> Found:
    for tool in tools:
        if not provider.name.match(tool.name):
            yield "error", pointer(tool.name), "tool name is refused", provider.name_rule
        elif provider is _GEMINI and (len(tool.name) > 64 or ":" in tool.name):
            yield (
                "warning",
                pointer(tool.name),
                "older Gemini API versions refuse it (a colon before 2025-12, more than 64 "
                "characters before 2026-05)",
                provider.name_rule,
            )
    if provider.max_tools is not None and len(tools) > provider.max_tools:
        yield (
            provider.max_tools_level,
            "",
            f"{len(tools)} tools declared, more than {provider.max_tools}",
            provider.max_tools_rule,
        )


def _transforms(
    target: Target, adapter: Adapter, tools: Sequence[ToolSpec], parallel: bool | None
) -> Found:
    """What the adapter's request carries differently from the contract (read back)."""
    settings = RequestSettings(ToolChoice("auto"), parallel, strict=target.strict)
    try:
        request = adapter.build_request(target.model, [Message("user", "?")], tools, settings)
    except ValueError as exc:
        yield "error", "", f"the adapter cannot build a request: {exc}", "adapter build_request"
        return
    sent = {spec.name: spec for spec in adapter.sent_tools(request.body)}
    rule = _TRANSFORM_RULES.get(
        (target.adapter, target.strict),
        "the adapter's schema transform differs from the contract (providers.md §9, row 8)",
    )
    for tool in tools:
        spec = sent.get(tool.name)
        if spec is None:
            yield "error", pointer(tool.name), "the adapter's request does not declare it", rule
            continue
        for drift in tool_drifts(tool, spec, adapter.wire_schema(tool.parameters, target.strict)):
            if drift.kind == "lossless":
                continue
            template = _TRANSFORM_MESSAGES.get(drift.kind, _TRANSFORM_MESSAGES["semantic_change"])
            message = template.format(
                contract=show_value(drift.contract), sent=show_value(drift.sent)
            )
            yield "warning", drift.pointer, f"{message} ({drift.kind})", rule


_TRANSFORM_MESSAGES = {
    "constraint_lost": "{contract} is not sent as a constraint (sent: {sent}), so the "
    "provider does not enforce it",
    "semantic_change": "sent as {sent} instead of {contract}: the provider enforces a "
    "different schema",
    "description_changed": "the model reads {sent} instead of {contract}",
}


_TRANSFORM_RULES = {
    ("openai_chat", True): f"{_OPENAI_SO}: the strict transform makes every object "
    "additionalProperties: false and optional properties required and nullable "
    "(providers.md §2.3)",
    ("openai_responses", True): f"{_OPENAI_SO}: the strict transform makes every object "
    "additionalProperties: false and optional properties required and nullable "
    "(providers.md §2.3)",
    ("anthropic", True): f"{_ANTHROPIC_STRICT}: unsupported keywords are moved into the "
    "description, as the SDK's transform does (providers.md §4.3)",
}


def _openai(
    target: Target,
    tools: Sequence[ToolSpec],
    wired: Sequence[tuple[ToolSpec, dict[str, Any]]],
    parallel: bool | None,
) -> Found:
    if not target.strict:
        yield (
            "note",
            "",
            "strict is off: the schemas guide the model but are not enforced",
            "OpenAI function calling: strict defaults to false (providers.md §2.2)",
        )
    for tool in tools:
        if len(tool.description) > 1024:
            yield (
                "warning",
                pointer(tool.name, "description"),
                f"description is {len(tool.description)} characters long",
                "OpenAI: descriptions over 1024 characters were rejected in one report "
                "[obs, unconfirmed] (providers.md §1.3, §10)",
            )
    if not target.strict:
        return
    if parallel is not False:
        yield (
            "warning",
            "",
            "strict schemas with parallel calls allowed (parallel_tool_calls is not false)",
            "OpenAI: strict mode is disabled for parallel calls of fine-tuned models; set "
            "parallel_tool_calls = false when you rely on it (providers.md §2.3)",
        )
    fine_tuned = target.model.startswith("ft:")
    totals = {"properties": 0, "enum": 0}
    for tool, schema in wired:
        root = pointer(tool.name, "parameters")
        if schema.get("type") != "object" or "anyOf" in schema:
            yield (
                "error",
                root,
                "the root schema is not a plain object",
                f"{_OPENAI_SO}: the root must be type object and not anyOf (providers.md §2.3)",
            )
        for at, node, depth in _nodes(schema):
            here = root + pointer(*at)
            if depth > 10:
                yield (
                    "error",
                    here,
                    f"nested {depth} levels deep",
                    f"{_OPENAI_SO}: at most 10 levels of nesting (providers.md §2.3)",
                )
            yield from _keywords(node, here, _OPENAI_STRICT_KEYWORDS)
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
                f"{_OPENAI_SO}: at most 5000 object properties and 1000 enum values "
                "(providers.md §2.3)",
            )


def _openai_node(node: dict[str, Any], here: str, fine_tuned: bool) -> Found:
    if _is_object(node):
        if node.get("additionalProperties") is not False:
            yield (
                "error",
                here + pointer("additionalProperties"),
                "an object without additionalProperties: false",
                f"{_OPENAI_SO}: every object needs additionalProperties: false (providers.md §2.3)",
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
                f"{_OPENAI_SO}: every property must be listed in required; make optional "
                "ones nullable (providers.md §2.3)",
            )
    kind = node.get("format")
    if isinstance(kind, str) and kind not in _OPENAI_FORMATS:
        yield (
            "warning",
            here + pointer("format"),
            f"format {kind!r} is not one strict mode supports",
            f"{_OPENAI_SO}: format is one of {', '.join(sorted(_OPENAI_FORMATS))} "
            "(providers.md §2.3)",
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
            f"{_OPENAI_SO}: enum size limits (providers.md §2.3)",
        )
    if fine_tuned:
        for keyword in sorted(_OPENAI_FINE_TUNED & set(node)):
            yield (
                "error",
                here + pointer(keyword),
                f"{keyword} with a fine-tuned model (ft:...)",
                f"{_OPENAI_SO}: fine-tuned models do not support minLength, maxLength, "
                "pattern, format, minimum, maximum, multipleOf, patternProperties, minItems, "
                "maxItems (providers.md §2.3)",
            )


def _anthropic(target: Target, wired: Sequence[tuple[ToolSpec, dict[str, Any]]]) -> Found:
    if not target.strict:
        yield (
            "note",
            "",
            "strict is off: the schemas guide the model but are not enforced",
            "Anthropic tool use: strict is opt-in per tool (providers.md §4.2, §4.3)",
        )
        return
    optional = unions = 0
    limits_rule = (
        f"{_ANTHROPIC_STRICT}: at most 20 strict tools, 24 optional parameters and 16 "
        "parameters using unions per request (providers.md §4.3)"
    )
    if len(wired) > 20:
        yield "error", "", f"{len(wired)} strict tools, more than 20", limits_rule
    for tool, schema in wired:
        root = pointer(tool.name, "parameters")
        for at, node, _ in _nodes(schema):
            here = root + pointer(*at)
            yield from _keywords(node, here, _ANTHROPIC_STRICT_KEYWORDS)
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
    if _is_object(node) and node.get("additionalProperties") is not False:
        yield (
            "error",
            here + pointer("additionalProperties"),
            "an object without additionalProperties: false",
            f"{_ANTHROPIC_STRICT}: additionalProperties: false is required on every object "
            "(providers.md §4.3)",
        )
    minimum = node.get("minItems")
    if minimum is not None and minimum not in (0, 1):
        yield (
            "error",
            here + pointer("minItems"),
            f"minItems {minimum}",
            f"{_ANTHROPIC_STRICT}: minItems may only be 0 or 1 (providers.md §4.3)",
        )
    kind = node.get("format")
    if isinstance(kind, str) and kind not in _ANTHROPIC_FORMATS:
        yield (
            "error",
            here + pointer("format"),
            f"format {kind!r} is not supported",
            f"{_ANTHROPIC_STRICT}: string format is one of "
            f"{', '.join(sorted(_ANTHROPIC_FORMATS))} (providers.md §4.3)",
        )
    enum = node.get("enum")
    if isinstance(enum, list) and any(isinstance(v, dict | list) for v in enum):
        yield (
            "error",
            here + pointer("enum"),
            "an enum with object or array values",
            f"{_ANTHROPIC_STRICT}: enum values must be primitives (providers.md §4.3)",
        )
    ref = node.get("$ref")
    if isinstance(ref, str) and (not ref.startswith("#") or _is_recursive(ref, at)):
        yield (
            "error",
            here + pointer("$ref"),
            f"$ref {ref!r} is external or recursive",
            f"{_ANTHROPIC_STRICT}: no recursive schemas and no external $ref (providers.md §4.3)",
        )


def _is_recursive(ref: str, at: tuple[str, ...]) -> bool:
    """Whether a local $ref points at the node holding it or one of its ancestors."""
    target = ref[1:]
    here = pointer(*at)
    return here == target or here.startswith(target + "/") or target == ""


def _gemini(
    target: Target,
    tools: Sequence[ToolSpec],
    wired: Sequence[tuple[ToolSpec, dict[str, Any]]],
    parallel: bool | None,
    *,
    carried: bool,
) -> Found:
    """`carried`: the adapter's request reads back as the contract, keyword for keyword."""
    from .adapters.gemini import to_openapi_subset

    if target.strict:
        yield (
            "warning",
            "",
            "strict = true changes nothing: Gemini has no strict flag",
            "Gemini: function declarations have no strict flag (providers.md §5.3)",
        )
    if parallel is not None:
        yield (
            "warning",
            "",
            f"parallel_tool_calls = {json.dumps(parallel)} is not sent: the model may "
            "still answer with several calls at once",
            "Gemini: no parallel-call toggle [unconfirmed] (providers.md §1.1, §5.4)",
        )
    property_name = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]{0,63}$")
    for tool, schema in wired:
        root = pointer(tool.name, "parameters")
        for at, node, _ in _nodes(schema):
            here = root + pointer(*at)
            yield from _keywords(node, here, _GEMINI_JSON_KEYWORDS)
            ref = node.get("$ref")
            siblings = sorted(k for k in node if not k.startswith("$"))
            if ref is not None and siblings:
                yield (
                    "error",
                    here,
                    f"$ref with sibling keywords {', '.join(siblings)}",
                    "Gemini parametersJsonSchema: a subschema with $ref may only have other "
                    "$-keywords (providers.md §5.3)",
                )
            properties = node.get("properties")
            for name in properties if isinstance(properties, dict) else ():
                if not property_name.match(name):
                    yield (
                        "warning",
                        here + pointer("properties", name),
                        f"property name {name!r} is refused in Gemini's Schema",
                        "Gemini: property names start with a letter or _, then "
                        "[a-zA-Z0-9_], at most 64 (providers.md §1.3)",
                    )
    # The `parameters` subset matters only when declarations go out in it; a request
    # that reads back as the contract sent them as full JSON Schema.
    if not carried:
        return
    for tool in tools:
        for at, keyword in to_openapi_subset(tool.parameters)[1]:
            yield (
                "note",
                pointer(tool.name, "parameters") + at + pointer(keyword),
                f"{keyword} would be dropped by the `parameters` (OpenAPI subset) form; that "
                "subset applies only to `parameters`, and this adapter sends "
                "`parametersJsonSchema`, which carries it",
                "Gemini parameters: an OpenAPI 3.0 subset that rejects additionalProperties, "
                "exclusiveMinimum, multipleOf, const... (providers.md §5.3)",
            )


# --- schema walking -------------------------------------------------------------------------


def _nodes(schema: Any, at: tuple[str, ...] = (), depth: int = 1) -> Iterator[Any]:
    """(path, node, object nesting depth) of every subschema, the root first."""
    if not isinstance(schema, dict):
        return
    yield at, schema, depth
    inner = depth + 1 if _is_object(schema) else depth
    for key, value in schema.items():
        if key in SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield from _nodes(sub, (*at, key, name), inner)
        elif (key in SCHEMA_LISTS or key in SCHEMA_VALUES) and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from _nodes(sub, (*at, key, str(index)), inner)
        elif key in SCHEMA_VALUES:
            yield from _nodes(value, (*at, key), inner)


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def _keywords(node: dict[str, Any], here: str, rules: _Keywords) -> Found:
    for keyword in node:
        if keyword in rules.supported:
            continue
        if keyword in rules.rejected:
            yield (
                "error",
                here + pointer(keyword),
                f"{keyword} is not supported",
                rules.rejected_rule,
            )
        else:
            yield (
                rules.other_level,
                here + pointer(keyword),
                f"{keyword} may be ignored or rejected",
                rules.other_rule.format(kw=keyword),
            )
