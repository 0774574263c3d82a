"""Provider-neutral lint machinery: issue levels, rule shapes and the schema walk.

The provider rules themselves belong to the adapters, which declare them as a
`LintRules` (`Capabilities.lint`) built from these shapes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from fcreplay.keywords import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES
from fcreplay.sources import pointer

if TYPE_CHECKING:
    from fcreplay.inputs.contract import ToolSpec

Level = Literal["error", "warning", "note"]
LEVELS: tuple[Level, ...] = ("error", "warning", "note")
Found = Iterator[tuple[Level, str, str, str]]
"""(level, pointer, message, rule) of the issues one check finds."""


@dataclass(frozen=True)
class Keywords:
    """Which schema keywords one provider mode supports, rejects, or leaves unconfirmed."""

    supported: frozenset[str]
    rejected: frozenset[str]
    rejected_rule: str
    other_level: Level
    other_rule: str
    """For keywords in neither list; `{kw}` is replaced by the keyword."""


@dataclass(frozen=True)
class Provider:
    """Rules that hold for one provider whatever the strict flag."""

    label: str
    name: re.Pattern[str]
    name_rule: str
    max_tools: int | None
    max_tools_level: Level
    max_tools_rule: str
    legacy_name: Callable[[str], bool] | None = None
    """Whether older API versions accept a name; a name `name` accepts but they do not is
    a warning saying `legacy_name_message`."""
    legacy_name_message: str = ""


@dataclass(frozen=True)
class LintSubject:
    """One target's request as its adapter sends it: what a provider's rules look at."""

    model: str
    strict: bool
    parallel: bool | None
    """The suite's parallel_tool_calls."""
    tools: tuple[ToolSpec, ...]
    """The contract's tools, in order."""
    wired: tuple[tuple[ToolSpec, dict[str, Any]], ...]
    """Each tool with its parameters as the adapter's `wire_schema` sends them."""
    carried: bool
    """The adapter's request reads back as the contract, keyword for keyword."""


@dataclass(frozen=True)
class LintRules:
    """One provider's lint rules, declared by the adapters that speak to it."""

    provider: Provider
    """Tool-name and tool-count rules, checked before the adapter's transform."""
    check: Callable[[LintSubject], Found]
    """Everything else: the schemas as wired, the strict flag, settings it cannot carry."""
    strict_transform_rule: str | None = None
    """Cited when the strict transform sends the contract differently; None: the generic
    rule."""


def nodes(schema: Any, at: tuple[str, ...] = (), depth: int = 1) -> Iterator[Any]:
    """(path, node, object nesting depth) of every subschema, the root first."""
    if not isinstance(schema, dict):
        return
    yield at, schema, depth
    inner = depth + 1 if is_object(schema) else depth
    for key, value in schema.items():
        if key in SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield from nodes(sub, (*at, key, name), inner)
        elif (key in SCHEMA_LISTS or key in SCHEMA_VALUES) and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from nodes(sub, (*at, key, str(index)), inner)
        elif key in SCHEMA_VALUES:
            yield from nodes(value, (*at, key), inner)


def is_object(node: dict[str, Any]) -> bool:
    """Whether a subschema describes an object (by its type or its properties)."""
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def keyword_issues(node: dict[str, Any], here: str, rules: Keywords) -> Found:
    """An issue for each keyword of `node` that `rules` does not support."""
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
