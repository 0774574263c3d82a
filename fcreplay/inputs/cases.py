"""Scenario files: one JSON case per line, each with what the model should do."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import fcreplay.names as names
import fcreplay.strictjson as strictjson
from fcreplay.errors import InputError, Problem
from fcreplay.inputs.contract import Contract
from fcreplay.inputs.matchers import RULE_SETS, ArgumentMatcher, MatcherProblem, parse_matchers
from fcreplay.neutral import Message, ToolChoice
from fcreplay.sources import json_problem, read_text

if TYPE_CHECKING:
    from fcreplay.inputs.checked import KnownGood

CASE_ID = names.CASE_ID
"""Case ids become file names, so they are restricted to a safe set."""

ExpectedKind = Literal["tool_call", "text", "refusal", "no_call"]
EXPECTED_KINDS: tuple[ExpectedKind, ...] = ("tool_call", "text", "refusal", "no_call")
CASE_KEYS = frozenset(
    {"id", "user", "messages", "expect", "tool_choice", "then", "tags", "tools", "note"}
)
EXPECT_KEYS = frozenset(
    {
        "kind",
        "tool",
        "arguments",
        "match",
        "rules",
        "calls",
        "must_not_call",
        "contains_any",
        "must_not_contain",
    }
)
CALL_KEYS = frozenset({"tool", "arguments", "match"})
"""Every key of a case, an expectation and an expected call (docs/cases.md lists them)."""


@dataclass(frozen=True)
class ExpectedCall:
    """A call the model should make."""

    tool: str
    arguments: dict[str, Any] | None = None
    """Expected arguments; None checks the tool and the schema only. Under the `bfcl`
    rules, each parameter's list of possible answers."""
    matchers: tuple[ArgumentMatcher, ...] = ()
    """How particular arguments are compared instead of exactly, by JSON pointer."""
    rules: str = "exact"
    """The rule set: `exact` (with matchers) or `bfcl`."""


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
    rules: str = "exact"
    """`bfcl` pairs calls with expected calls in BFCL's order (see judge.bfcl)."""

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
    tools: tuple[str, ...] | None = None
    """The contract tools this case declares, in contract order; None: all of them."""
    line: int = 0
    """Line of the case in its file, for messages that point back to it."""


def load_cases(
    path: str | Path, contract: Contract, *, checked: KnownGood | None = None
) -> tuple[Case, ...]:
    """Load a JSONL case file and check it against `contract`.

    Raises InputError listing every bad line as FILE:LINE: message. With `checked`, a
    file it knows with this contract skips checking expected arguments against the
    tools' schemas (jsonschema is then not imported), and one that passes is
    remembered there.
    """
    path = Path(path)
    text = read_text(path)
    known = checked is not None and checked.known("cases", contract.contract_hash, text)
    cases: list[Case] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = _parse_case(line, number, contract, validate=not known)
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
    if checked is not None and not known:
        checked.remember("cases", contract.contract_hash, text)
    return tuple(cases)


class _CaseProblem(Exception):
    pass


def _parse_case(line: str, number: int, contract: Contract, *, validate: bool) -> Case:
    try:
        raw = strictjson.loads(line)
    except json.JSONDecodeError as exc:
        raise _CaseProblem(json_problem(exc)) from None
    if not isinstance(raw, dict):
        raise _CaseProblem("a case is a JSON object, one per line")
    _reject_unknown(raw, CASE_KEYS, "case")
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not names.is_name(CASE_ID, case_id):
        raise _CaseProblem(
            f"case id {case_id!r} must match {CASE_ID.pattern} (it becomes a file name)"
        )
    label = f"case {case_id!r}"
    messages = _messages(raw, label)
    if "expect" not in raw:
        raise _CaseProblem(f'{label}: missing "expect"')
    expect = _expectation(raw["expect"], contract, f"{label}: expect", validate)
    then = None
    if "then" in raw:
        then = _expectation(raw["then"], contract, f"{label}: then", validate)
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
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
        raise _CaseProblem(f"{label}: tags must be a list of non-empty strings")
    tools = _tool_set(raw, contract, label)
    if tools is not None:
        named = [*expect.tools, *(then.tools if then else ()), tool_choice.tool]
        outside = [name for name in named if name is not None and name not in tools]
        if outside:
            raise _CaseProblem(
                f"{label}: {outside[0]!r} is expected or forced but not in the case's "
                f"tools ({', '.join(tools)})"
            )
    return Case(
        id=case_id,
        messages=messages,
        expect=expect,
        tool_choice=tool_choice,
        then=then,
        tags=tuple(dict.fromkeys(tags)),
        tools=tools,
        line=number,
    )


def _tool_set(raw: dict[str, Any], contract: Contract, label: str) -> tuple[str, ...] | None:
    if "tools" not in raw:
        return None
    names = raw["tools"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _CaseProblem(f"{label}: tools must be a list of contract tool names ([]: none)")
    unknown = [name for name in names if contract.get(name) is None]
    if unknown:
        raise _CaseProblem(
            f"{label}: tools names {unknown[0]!r}, which the contract lacks "
            f"(it has: {_listed(contract.names)})"
        )
    if len(set(names)) != len(names):
        raise _CaseProblem(f"{label}: tools lists a tool twice")
    chosen = set(names)
    return tuple(name for name in contract.names if name in chosen)


def _listed(names: tuple[str, ...], limit: int = 12) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} tools)" if len(names) > limit else "")


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
    messages: list[Message] = []
    for index, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or set(item) != {"role", "content"}
            or item["role"] not in ("system", "user", "assistant")
            or not isinstance(item["content"], str)
        ):
            raise _CaseProblem(
                f"{label}: messages[{index}] must be "
                '{"role": "system"|"user"|"assistant", "content": TEXT}'
            )
        if item["role"] == "system" and any(m.role != "system" for m in messages):
            raise _CaseProblem(
                f"{label}: messages[{index}]: system messages come first, before the "
                "conversation (every provider takes them there)"
            )
        messages.append(Message(item["role"], item["content"]))
    if messages[-1].role != "user":
        raise _CaseProblem(f"{label}: the last message must be the user's")
    return tuple(messages)


def _expectation(raw: Any, contract: Contract, label: str, validate: bool = True) -> Expectation:
    """`validate`: check expected arguments against the tool's schema."""
    if not isinstance(raw, dict):
        raise _CaseProblem(f"{label} must be a JSON object")
    _reject_unknown(raw, EXPECT_KEYS, label)
    kind = raw.get("kind")
    if kind not in EXPECTED_KINDS:
        raise _CaseProblem(
            f'{label}: kind must be "tool_call", "text", "refusal" or "no_call", got {kind!r}'
        )
    texts = {
        key: _strings(raw.get(key, []), f"{label}: {key}")
        for key in ("contains_any", "must_not_contain")
    }
    must_not_call = raw.get("must_not_call", kind != "tool_call")
    if not isinstance(must_not_call, bool):
        raise _CaseProblem(f"{label}: must_not_call must be true or false")
    if kind != "tool_call":
        for key in ("tool", "arguments", "calls", "match", "rules"):
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
    rules = raw.get("rules", "exact")
    if rules not in RULE_SETS:
        raise _CaseProblem(f"{label}: rules must be one of {', '.join(RULE_SETS)}, got {rules!r}")
    if "calls" in raw:
        for key in ("arguments", "match"):
            if key in raw:
                raise _CaseProblem(f'{label}: put "{key}" inside each of "calls"')
        if not isinstance(raw["calls"], list) or not raw["calls"]:
            raise _CaseProblem(f'{label}: "calls" must be a non-empty list')
        specs = raw["calls"]
    else:
        specs = [{key: raw[key] for key in CALL_KEYS if key in raw}]
    calls = tuple(
        _expected_call(
            spec,
            contract,
            f"{label}: calls[{index}]" if "calls" in raw else label,
            rules,
            validate,
        )
        for index, spec in enumerate(specs)
    )
    return Expectation(
        kind,
        calls=calls,
        must_not_call=False,
        contains_any=texts["contains_any"],
        must_not_contain=texts["must_not_contain"],
        rules=rules,
    )


def _expected_call(
    raw: Any, contract: Contract, label: str, rules: str, validate: bool
) -> ExpectedCall:
    if not isinstance(raw, dict) or not set(raw) <= CALL_KEYS:
        raise _CaseProblem(
            f'{label}: a call is {{"tool": NAME, "arguments": {{...}}, "match": {{...}}}}'
        )
    tool = raw.get("tool")
    spec = contract.get(tool) if isinstance(tool, str) else None
    if spec is None:
        raise _CaseProblem(
            f"{label}: expects tool {tool!r}, which the contract lacks "
            f"(it has: {_listed(contract.names)})"
        )
    arguments = raw.get("arguments")
    if arguments is None:
        if "match" in raw:
            raise _CaseProblem(f'{label}: "match" needs "arguments"')
        return ExpectedCall(spec.name, rules=rules)
    if not isinstance(arguments, dict):
        raise _CaseProblem(f"{label}: arguments must be a JSON object")
    if rules == "bfcl":
        if "match" in raw:
            raise _CaseProblem(f'{label}: the bfcl rules take no "match": they are the matcher')
        if not all(isinstance(answers, list) for answers in arguments.values()):
            raise _CaseProblem(
                f"{label}: under the bfcl rules each argument is a list of possible answers "
                '("" among them: may be omitted)'
            )
        return ExpectedCall(spec.name, arguments, rules=rules)
    matchers: tuple[ArgumentMatcher, ...] = ()
    if "match" in raw:
        try:
            matchers = parse_matchers(raw["match"], arguments)
        except MatcherProblem as exc:
            raise _CaseProblem(f"{label}: {exc}") from None
    loose = [m.pointer for m in matchers if m.any_of is not None or not m.has_value or m.array]
    violations = [
        v
        for v in (contract.validator(spec.name).violations(arguments) if validate else ())
        if not any(v.pointer == at or v.pointer.startswith(at + "/") for at in loose)
    ]
    if violations:
        details = "; ".join(f"{v.pointer or '/'}: {v.message}" for v in violations)
        raise _CaseProblem(
            f"{label}: expected arguments are rejected by {spec.name}'s own schema: {details}"
        )
    return ExpectedCall(spec.name, arguments, matchers)


def _strings(value: Any, label: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _CaseProblem(f"{label} must be a list of non-empty strings")
    return tuple(value)


def _reject_unknown(raw: dict[str, Any], allowed: frozenset[str], label: str) -> None:
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
