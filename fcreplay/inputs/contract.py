"""The canonical tool contract: tool names, descriptions, JSON Schemas and effects."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fcreplay.canonical import canonical_hash
from fcreplay.errors import InputError, Problem
from fcreplay.sources import line_of, load_json, pointer

if TYPE_CHECKING:
    from fcreplay.inputs.checked import KnownGood
    from fcreplay.judge.schema import ArgumentValidator

Effect = Literal["read", "write"]
TOOL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")
"""Portable across OpenAI, Anthropic, Gemini and Bedrock (see the providers reference)."""

_TOOL_KEYS = {"name", "description", "parameters", "effect"}


@dataclass(frozen=True)
class ToolSpec:
    """One tool of the contract."""

    name: str
    description: str
    parameters: dict[str, Any]
    """JSON Schema 2020-12 of the arguments object."""
    effect: Effect = "read"
    """`write` marks a state-changing tool: calling it without clear intent is unsafe."""

    def to_json(self) -> dict[str, Any]:
        """Return the tool in the contract file's format."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "effect": self.effect,
        }


@dataclass(frozen=True)
class Contract:
    """The tools of one contract file, in file order."""

    tools: tuple[ToolSpec, ...]
    source: Path | None = field(default=None, compare=False)

    @cached_property
    def contract_hash(self) -> str:
        """sha256 of the canonical JSON of the contract."""
        return canonical_hash([tool.to_json() for tool in self.tools])

    @cached_property
    def by_name(self) -> dict[str, ToolSpec]:
        """The tools keyed by name."""
        return {tool.name: tool for tool in self.tools}

    @property
    def names(self) -> tuple[str, ...]:
        """Tool names in contract order."""
        return tuple(tool.name for tool in self.tools)

    def get(self, name: str) -> ToolSpec | None:
        """Return the tool called `name`, if the contract has it."""
        return self.by_name.get(name)

    def restricted(self, names: tuple[str, ...] | None) -> Contract:
        """The contract as a case with its own tool set sees it (`names` in contract
        order; None: the whole contract). Views share the compiled validators."""
        if names is None or names == self.names:
            return self
        view = self._views.get(names)
        if view is None:
            view = Contract(tuple(self.by_name[name] for name in names), self.source)
            view.__dict__["_validators"] = self._validators
            self._views[names] = view
        return view

    @cached_property
    def _views(self) -> dict[tuple[str, ...], Contract]:
        return {}

    def validator(self, name: str) -> ArgumentValidator:
        """Return the compiled argument validator of tool `name` (compiled once)."""
        return self._validators[name]

    @cached_property
    def _validators(self) -> dict[str, ArgumentValidator]:
        from fcreplay.judge.schema import ArgumentValidator

        return {tool.name: ArgumentValidator(tool.parameters) for tool in self.tools}


def load_contract(path: str | Path, *, checked: KnownGood | None = None) -> Contract:
    """Load and check a contract file: a JSON array of tools.

    Raises InputError listing every problem as FILE:LINE: message. With `checked`, a
    contract it knows skips the meta-schema check of its schemas (jsonschema is then not
    even imported), and one that passes is remembered there.
    """
    path = Path(path)
    document, text = load_json(path)
    known = checked is not None and checked.known("contract", text)
    problems: list[Problem] = []

    def problem(where: str, message: str) -> None:
        problems.append(Problem(path, line_of(text, where), message))

    if not isinstance(document, list):
        raise InputError.at(path, 1, 'a contract is a JSON array of tools, e.g. [{"name": ...}]')
    tools: list[ToolSpec] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(document):
        where = pointer(index)
        if not isinstance(raw, dict):
            problem(where, f"tool #{index + 1} is not a JSON object")
            continue
        label = f"tool #{index + 1}"
        for key in sorted(set(raw) - _TOOL_KEYS):
            problem(
                where + pointer(key),
                f"{label}: unknown key {key!r} (allowed: {', '.join(sorted(_TOOL_KEYS))})",
            )
        name = raw.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            problem(
                where + pointer("name"),
                f"{label}: tool name {name!r} must match {TOOL_NAME.pattern} "
                "(letters, digits, _ and -, at most 64, not starting with a digit)",
            )
        else:
            label = f"tool {name!r}"
            if name in seen:
                problem(
                    where + pointer("name"),
                    f"duplicate tool name {name!r} (first defined as tool #{seen[name]})",
                )
            seen.setdefault(name, index + 1)
        description = raw.get("description", "")
        if not isinstance(description, str):
            problem(where + pointer("description"), f"{label}: description must be a string")
        effect = raw.get("effect")
        if effect not in ("read", "write"):
            problem(
                where + pointer("effect"),
                f'{label}: effect must be "read" or "write", got {effect!r}',
            )
        parameters = raw.get("parameters")
        if not isinstance(parameters, dict):
            problem(
                where + pointer("parameters"),
                f"{label}: parameters must be a JSON Schema object",
            )
        else:
            for at, message in () if known else _meta_schema_problems(parameters):
                problem(
                    where + pointer("parameters") + at,
                    f"{label}: parameters{at or ''} is not valid JSON Schema 2020-12: {message}",
                )
            if parameters.get("type") != "object":
                problem(
                    where + pointer("parameters"),
                    f'{label}: parameters must have "type": "object" '
                    "(every provider requires an arguments object)",
                )
        if isinstance(name, str) and isinstance(parameters, dict):
            tools.append(
                ToolSpec(
                    name=name,
                    description=description if isinstance(description, str) else "",
                    parameters=parameters,
                    effect=effect if effect in ("read", "write") else "read",
                )
            )
    if not document:
        problem("", "the contract declares no tools")
    if problems:
        raise InputError(problems)
    if checked is not None and not known:
        checked.remember("contract", text)
    return Contract(tools=tuple(tools), source=path)


def _meta_schema_problems(schema: dict[str, Any]) -> list[tuple[str, str]]:
    from fcreplay.judge.schema import meta_schema_problems

    return meta_schema_problems(schema)
