"""Scenario files: one JSON case per line, each with what the model should do."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fcreplay.errors import InputError, Problem
from fcreplay.inputs.contract import Contract
from fcreplay.neutral import Message, ToolChoice
from fcreplay.sources import read_text

CASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
"""Case ids become file names, so they are restricted to a safe set."""

ExpectedKind = Literal["tool_call", "text", "refusal"]
_CASE_KEYS = {"id", "user", "messages", "expect", "tool_choice", "then", "tags", "note"}
_EXPECT_KEYS = {
    "kind",
    "tool",
    "arguments",
    "calls",
    "must_not_call",
    "contains_any",
    "must_not_contain",
}


@dataclass(frozen=True)
class ExpectedCall:
    """A call the model should make."""

    tool: str
    arguments: dict[str, Any] | None = None
    """Exact expected arguments; None checks the tool and the schema only."""


@dataclass(frozen=True)
class Expectation:
    """What a correct turn looks like."""

    kind: ExpectedKind
    calls: tuple[ExpectedCall, ...] = ()
    """For tool_call: the calls, compared as a set (their order never matters)."""
    must_not_call: bool = True
    """For text/refusal: any call at all is a failure, even beside a good answer."""
    contains_any: tuple[str, ...] = ()
    """The text must contain one of these (case-insensitive); empty means no check."""
    must_not_contain: tuple[str, ...] = ()
    """The text must contain none of these (case-insensitive)."""

    @property
    def tools(self) -> tuple[str, ...]:
        """The expected tool names."""
        return tuple(call.tool for call in self.calls)


@dataclass(frozen=True)
class Case:
    """One scenario of the suite."""

    id: str
    messages: tuple[Message, ...]
    expect: Expectation
    tool_choice: ToolChoice = field(default_factory=ToolChoice)
    then: Expectation | None = None
    """Expectation for the turn after the tool results, when the case has one."""
    tags: tuple[str, ...] = ()
    line: int = 0
    """Line of the case in its file, for messages that point back to it."""


def load_cases(path: str | Path, contract: Contract) -> tuple[Case, ...]:
    """Load a JSONL case file and check it against `contract`.

    Raises InputError listing every bad line as FILE:LINE: message.
    """
    path = Path(path)
    text = read_text(path)
    cases: list[Case] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = _parse_case(line, number, contract)
        except _CaseProblem as exc:
            problems.append(Problem(path, number, str(exc)))
            continue
        if case.id in first_line:
            problems.append(
                Problem(
                    path,
                    number,
                    f"duplicate case id {case.id!r} (first on line {first_line[case.id]})",
                )
            )
            continue
        first_line[case.id] = number
        cases.append(case)
    if not cases and not problems:
        problems.append(Problem(path, None, "no cases: the file has no JSON lines"))
    if problems:
        raise InputError(problems)
    return tuple(cases)


class _CaseProblem(Exception):
    pass


def _parse_case(line: str, number: int, contract: Contract) -> Case:
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _CaseProblem(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(raw, dict):
        raise _CaseProblem("a case is a JSON object, one per line")
    _reject_unknown(raw, _CASE_KEYS, "case")
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not CASE_ID.match(case_id):
        raise _CaseProblem(
            f"case id {case_id!r} must match {CASE_ID.pattern} (it becomes a file name)"
        )
    label = f"case {case_id!r}"
    messages = _messages(raw, label)
    if "expect" not in raw:
        raise _CaseProblem(f'{label}: missing "expect"')
    expect = _expectation(raw["expect"], contract, f"{label}: expect")
    then = None
    if "then" in raw:
        then = _expectation(raw["then"], contract, f"{label}: then")
    try:
        tool_choice = ToolChoice.parse(raw.get("tool_choice"))
    except ValueError as exc:
        raise _CaseProblem(f"{label}: {exc}") from None
    if tool_choice.tool is not None and contract.get(tool_choice.tool) is None:
        raise _CaseProblem(
            f"{label}: tool_choice names tool {tool_choice.tool!r}, "
            f"which the contract lacks (it has: {', '.join(contract.names)})"
        )
    tags = raw.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _CaseProblem(f"{label}: tags must be a list of strings")
    return Case(
        id=case_id,
        messages=messages,
        expect=expect,
        tool_choice=tool_choice,
        then=then,
        tags=tuple(tags),
        line=number,
    )


def _messages(raw: dict[str, Any], label: str) -> tuple[Message, ...]:
    if ("user" in raw) == ("messages" in raw):
        raise _CaseProblem(f'{label}: give exactly one of "user" or "messages"')
    if "user" in raw:
        if not isinstance(raw["user"], str) or not raw["user"].strip():
            raise _CaseProblem(f'{label}: "user" must be a non-empty string')
        return (Message("user", raw["user"]),)
    items = raw["messages"]
    if not isinstance(items, list) or not items:
        raise _CaseProblem(f'{label}: "messages" must be a non-empty list')
    messages = []
    for index, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or set(item) != {"role", "content"}
            or item["role"] not in ("user", "assistant")
            or not isinstance(item["content"], str)
        ):
            raise _CaseProblem(
                f"{label}: messages[{index}] must be "
                '{"role": "user"|"assistant", "content": TEXT}'
            )
        messages.append(Message(item["role"], item["content"]))
    if messages[-1].role != "user":
        raise _CaseProblem(f"{label}: the last message must be the user's")
    return tuple(messages)


def _expectation(raw: Any, contract: Contract, label: str) -> Expectation:
    if not isinstance(raw, dict):
        raise _CaseProblem(f"{label} must be a JSON object")
    _reject_unknown(raw, _EXPECT_KEYS, label)
    kind = raw.get("kind")
    if kind not in ("tool_call", "text", "refusal"):
        raise _CaseProblem(f'{label}: kind must be "tool_call", "text" or "refusal", got {kind!r}')
    texts = {
        key: _strings(raw.get(key, []), f"{label}: {key}")
        for key in ("contains_any", "must_not_contain")
    }
    must_not_call = raw.get("must_not_call", kind != "tool_call")
    if not isinstance(must_not_call, bool):
        raise _CaseProblem(f"{label}: must_not_call must be true or false")
    if kind != "tool_call":
        for key in ("tool", "arguments", "calls"):
            if key in raw:
                raise _CaseProblem(f'{label}: "{key}" only makes sense with kind tool_call')
        return Expectation(
            kind,
            must_not_call=must_not_call,
            contains_any=texts["contains_any"],
            must_not_contain=texts["must_not_contain"],
        )
    if must_not_call:
        raise _CaseProblem(f"{label}: must_not_call contradicts kind tool_call")
    if ("tool" in raw) == ("calls" in raw):
        raise _CaseProblem(
            f'{label}: kind tool_call needs exactly one of "tool" (with optional '
            '"arguments") or "calls": [{"tool": ..., "arguments": ...}, ...]'
        )
    if "calls" in raw:
        if "arguments" in raw:
            raise _CaseProblem(f'{label}: put "arguments" inside each of "calls"')
        if not isinstance(raw["calls"], list) or not raw["calls"]:
            raise _CaseProblem(f'{label}: "calls" must be a non-empty list')
        specs = raw["calls"]
    else:
        specs = [{key: raw[key] for key in ("tool", "arguments") if key in raw}]
    calls = tuple(
        _expected_call(spec, contract, f"{label}: calls[{index}]" if "calls" in raw else label)
        for index, spec in enumerate(specs)
    )
    return Expectation(
        kind,
        calls=calls,
        must_not_call=False,
        contains_any=texts["contains_any"],
        must_not_contain=texts["must_not_contain"],
    )


def _expected_call(raw: Any, contract: Contract, label: str) -> ExpectedCall:
    if not isinstance(raw, dict) or not set(raw) <= {"tool", "arguments"}:
        raise _CaseProblem(f'{label}: a call is {{"tool": NAME, "arguments": {{...}}}}')
    tool = raw.get("tool")
    spec = contract.get(tool) if isinstance(tool, str) else None
    if spec is None:
        raise _CaseProblem(
            f"{label}: expects tool {tool!r}, which the contract lacks "
            f"(it has: {', '.join(contract.names)})"
        )
    arguments = raw.get("arguments")
    if arguments is None:
        return ExpectedCall(spec.name)
    if not isinstance(arguments, dict):
        raise _CaseProblem(f"{label}: arguments must be a JSON object")
    violations = contract.validator(spec.name).violations(arguments)
    if violations:
        details = "; ".join(f"{v.pointer or '/'}: {v.message}" for v in violations)
        raise _CaseProblem(
            f"{label}: expected arguments are rejected by {spec.name}'s own schema: {details}"
        )
    return ExpectedCall(spec.name, arguments)


def _strings(value: Any, label: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _CaseProblem(f"{label} must be a list of non-empty strings")
    return tuple(value)


def _reject_unknown(raw: dict[str, Any], allowed: set[str], label: str) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise _CaseProblem(
            f"{label}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})"
        )


def parse_expectation(raw: Any, contract: Contract, *, label: str = "expect") -> Expectation:
    """An expectation from its JSONL form (a case's `expect` object), checked against `contract`.

    Raises ValueError saying what is wrong, as the case file loader would.
    """
    if isinstance(raw, Expectation):
        return raw
    try:
        return _expectation(raw, contract, label)
    except _CaseProblem as exc:
        raise ValueError(str(exc)) from None
