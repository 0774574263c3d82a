"""Classify differences between a contract tool and a sent one, keyword by keyword.

The classes (see `fcreplay.schemadiff` for how they are counted and reported):

- `lossless`: representation only (type-name case, `type: "x"` vs `["x"]`, the
  order of `required` or `enum`, `const: x` vs `enum: [x]`, a `type` implied by an
  `enum`, a missing `additionalProperties` vs `true`, `$schema`, `propertyOrdering`);
- `constraint_lost`: a validation keyword (pattern, format, min/max bounds,
  multipleOf, uniqueItems, contains...) dropped, or weakened (a lower bound
  lowered, an upper bound raised, a coarser multipleOf);
- `semantic_change`: `required`, `enum`, `const`, `additionalProperties`, `type`
  (nullability included), properties or subschemas added, removed or changed, a
  constraint added or tightened, and any keyword this table does not know;
- `description_changed`: `description` or another annotation the model reads
  (title, examples, default, deprecated...) altered, added or dropped;
- `tool_missing`, `tool_extra`, `order_changed`, `tool_choice_mismatch`,
  `parallel_mismatch`: about the request as a whole (`fcreplay.schemadiff`).

Structural differences come from `structdiff` (the only deepdiff user) and are
grouped by the schema keyword they fall under, so a shortened `required` list is
one difference at `/<tool>/parameters/required`, not one per list item.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fcreplay.canonical import canonical_json, same_value
from fcreplay.inputs.contract import ToolSpec
from fcreplay.keywords import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES
from fcreplay.sources import pointer
from fcreplay.structdiff import MISSING, differences

CLASSES = (
    "lossless",
    "constraint_lost",
    "semantic_change",
    "description_changed",
    "tool_missing",
    "tool_extra",
    "order_changed",
    "tool_choice_mismatch",
    "parallel_mismatch",
)
"""Every class of difference, in the order reports list them."""

ALLOWABLE = CLASSES[1:]
"""Classes `--allow` and `schema_diff_allow` accept; lossless never blocks anyway."""

# --- JSON Schema vocabulary ------------------------------------------------------------

LOWER_BOUNDS = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
UPPER_BOUNDS = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)
CONSTRAINTS = (
    LOWER_BOUNDS
    | UPPER_BOUNDS
    | {
        "pattern",
        "format",
        "multipleOf",
        "uniqueItems",
        "contains",
        "propertyNames",
        "dependentRequired",
    }
)
"""Validation keywords whose loss lets more values through."""
ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
    }
)
"""Keywords the model reads but validation ignores."""
REPRESENTATION = frozenset({"$schema", "propertyOrdering"})
"""Keywords that change how a schema is written, never what it accepts."""


@dataclass(frozen=True)
class SchemaChange:
    """One difference between a sent declaration (or request setting) and the contract."""

    tool: str | None
    """The tool concerned; None for the tool list's order and request-level settings."""
    pointer: str
    """`/<tool>/parameters/...` for schemas, `/<tool>` for a whole tool, "" for the request."""
    kind: str
    """One of CLASSES."""
    contract: Any
    """The contract's (or the variant's) value; MISSING when it has none."""
    sent: Any
    """The value the request carried; MISSING when it had none."""
    documented: bool = False
    """The adapter's own `wire_schema` transform makes this same change."""


# --- schemas -----------------------------------------------------------------------------


def tool_differences(
    contract: ToolSpec, sent: ToolSpec, transformed: dict[str, Any] | None = None
) -> list[SchemaChange]:
    """Differences of one declared tool; `transformed` marks the documented ones."""
    changes = []
    if contract.description != sent.description:
        changes.append(
            SchemaChange(
                contract.name,
                pointer(contract.name, "description"),
                "description_changed",
                contract.description,
                sent.description or MISSING,
            )
        )
    found = schema_differences(contract.name, contract.parameters, sent.parameters)
    if found and transformed is not None:
        known = {
            (d.pointer, d.kind, difference_key(d.contract), difference_key(d.sent))
            for d in schema_differences(contract.name, contract.parameters, transformed)
        }
        found = [
            SchemaChange(d.tool, d.pointer, d.kind, d.contract, d.sent, documented=True)
            if (d.pointer, d.kind, difference_key(d.contract), difference_key(d.sent)) in known
            else d
            for d in found
        ]
    return changes + found


def schema_differences(tool: str, contract: Any, sent: Any) -> list[SchemaChange]:
    """Classified differences between a contract schema and a sent one, one per keyword."""
    if same_value(contract, sent):
        return []
    places: dict[tuple[tuple[str, ...], str | None], None] = {}
    for at in (difference.path for difference in differences(contract, sent)):
        places.setdefault(_locate(_tokens(at)), None)
    changes = []
    for node, keyword in places:
        path = (*node, keyword) if keyword is not None else node
        before, after = _at(contract, path), _at(sent, path)
        kind = classify(keyword, before, after, _at(contract, node), _at(sent, node))
        changes.append(SchemaChange(tool, pointer(tool, "parameters", *path), kind, before, after))
    return changes


def _tokens(at: str) -> list[str]:
    if not at:
        return []
    return [part.replace("~1", "/").replace("~0", "~") for part in at[1:].split("/")]


def _locate(tokens: Sequence[str]) -> tuple[tuple[str, ...], str | None]:
    """Split a difference's path into (schema node, keyword); None: the whole node."""
    node: list[str] = []
    index = 0
    while index < len(tokens):
        keyword = tokens[index]
        rest = len(tokens) - index - 1
        if keyword in SCHEMA_MAPS or keyword in SCHEMA_LISTS:
            if not rest:
                return tuple(node), keyword
            node += [keyword, tokens[index + 1]]
            index += 2
        elif keyword in SCHEMA_VALUES:
            if not rest:
                return tuple(node), keyword
            if keyword == "items" and tokens[index + 1].isdigit():
                node += [keyword, tokens[index + 1]]
                index += 2
            else:
                node.append(keyword)
                index += 1
        else:
            return tuple(node), keyword
    return tuple(node), None


def _at(schema: Any, path: Sequence[str]) -> Any:
    node = schema
    for token in path:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return MISSING
    return node


def classify(keyword: str | None, before: Any, after: Any, node: Any, sent_node: Any) -> str:
    """The class of a change of `keyword` from `before` (contract) to `after` (sent).

    `node` and `sent_node` are the schemas holding the keyword, for the cases
    where another keyword says the same thing (`const` vs a one-value `enum`).
    """
    if keyword is None:
        return "semantic_change"  # a whole property or subschema added, removed or replaced
    if keyword in REPRESENTATION:
        return "lossless"
    if keyword in ANNOTATIONS:
        return "description_changed"
    special = _SPECIAL.get(keyword)
    if special is not None:
        return special(before, after, node, sent_node)
    if keyword in CONSTRAINTS:
        return _constraint(keyword, before, after)
    return "semantic_change"


def _type_change(before: Any, after: Any, node: Any, sent_node: Any) -> str:
    if before is not MISSING and after is not MISSING:
        return "lossless" if _types(before) == _types(after) else "semantic_change"
    # A type left out where an enum or const already restricts values to that type.
    present, other = (before, sent_node) if after is MISSING else (after, node)
    types, values = _types(present), _literals(other)
    if types is None or not values:
        return "semantic_change"
    fits = all(types.intersection(_json_types(value)) for value in values)
    return "lossless" if fits else "semantic_change"


def _types(value: Any) -> frozenset[str] | None:
    if isinstance(value, str):
        return frozenset({value.lower()})
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return frozenset(item.lower() for item in value)
    return None


def _literals(node: Any) -> list[Any]:
    """The values an `enum` or `const` of `node` allows; [] when it has neither."""
    if not isinstance(node, dict):
        return []
    if isinstance(node.get("enum"), list):
        return list(node["enum"])
    return [node["const"]] if "const" in node else []


def _json_types(value: Any) -> tuple[str, ...]:
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("boolean",)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return ("integer", "number")  # 2 is an integer and a number
    if isinstance(value, float):
        return ("number",)
    if isinstance(value, str):
        return ("string",)
    return ("array",) if isinstance(value, list) else ("object",)


def _set_change(before: Any, after: Any, node: Any, sent_node: Any) -> str:
    if isinstance(before, list) and isinstance(after, list):
        same = {canonical_json(v) for v in before} == {canonical_json(v) for v in after}
        return "lossless" if same and len(before) == len(after) else "semantic_change"
    return "semantic_change"


def _enum_change(before: Any, after: Any, node: Any, sent_node: Any) -> str:
    if before is MISSING and isinstance(node, dict) and "const" in node:
        return "lossless" if same_value(after, [node["const"]]) else "semantic_change"
    if after is MISSING and isinstance(sent_node, dict) and "const" in sent_node:
        return "lossless" if same_value(before, [sent_node["const"]]) else "semantic_change"
    return _set_change(before, after, node, sent_node)


def _const_change(before: Any, after: Any, node: Any, sent_node: Any) -> str:
    if after is MISSING and isinstance(sent_node, dict):
        return "lossless" if same_value(sent_node.get("enum"), [before]) else "semantic_change"
    if before is MISSING and isinstance(node, dict):
        return "lossless" if same_value(node.get("enum"), [after]) else "semantic_change"
    return "semantic_change"


def _additional_change(before: Any, after: Any, node: Any, sent_node: Any) -> str:
    def meaning(value: Any) -> Any:
        return True if value is MISSING or value == {} else value

    return "lossless" if same_value(meaning(before), meaning(after)) else "semantic_change"


_SPECIAL = {
    "type": _type_change,
    "required": _set_change,
    "enum": _enum_change,
    "const": _const_change,
    "additionalProperties": _additional_change,
}


def _constraint(keyword: str, before: Any, after: Any) -> str:
    if before is MISSING:
        return "semantic_change"  # a constraint the contract does not have
    if after is MISSING:
        return "constraint_lost"
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (before, after))
    if numbers and keyword in LOWER_BOUNDS:
        return "constraint_lost" if after < before else "semantic_change"
    if numbers and keyword in UPPER_BOUNDS:
        return "constraint_lost" if after > before else "semantic_change"
    if numbers and keyword == "multipleOf" and after:
        return "constraint_lost" if (before / after).is_integer() else "semantic_change"
    if keyword == "uniqueItems" and before is True and after is False:
        return "constraint_lost"
    return "semantic_change"


def difference_key(value: Any) -> str:
    """A canonical string of a drift value, MISSING included (for folding)."""
    return "\0missing" if value is MISSING else canonical_json(value)


def show_value(value: Any, width: int = 60) -> str:
    """A JSON value on one line, cut to `width` characters; "(missing)" for MISSING."""
    if value is MISSING:
        return "(missing)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."
