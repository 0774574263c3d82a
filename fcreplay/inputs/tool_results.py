"""The fake tool executor: rules from a data file answer calls, nothing real runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcreplay.canonical import same_value
from fcreplay.decision import ToolCall
from fcreplay.errors import InputError, Problem
from fcreplay.inputs.contract import Contract
from fcreplay.neutral import ToolResult
from fcreplay.sources import line_of, load_json, pointer

RULE_KEYS = frozenset({"tool", "when", "result", "error"})
ERROR_KEYS = frozenset({"code", "message", "retryable"})
FILE_KEYS = frozenset({"note", "rules"})
"""Every key of a tool-results file, a rule and an error (docs/tool-results.md)."""
ANY_TOOL = "*"
"""A rule's tool that matches a call to any tool of the contract."""


@dataclass(frozen=True)
class ToolFailure:
    """A tool error: the code is for the orchestrator, the message for the model."""

    code: str
    message: str
    retryable: bool


@dataclass(frozen=True)
class Rule:
    """When `tool` is called with arguments containing `when`, answer with result or error."""

    tool: str
    when: dict[str, Any]
    result: dict[str, Any] | None
    error: ToolFailure | None


@dataclass(frozen=True)
class Execution:
    """The executor's answer to one call."""

    result: ToolResult
    failure: ToolFailure | None = None


class FakeExecutor:
    """Answers calls from rules; the first rule whose tool and argument subset match wins."""

    def __init__(self, rules: tuple[Rule, ...], contract: Contract) -> None:
        self.rules = rules
        self._contract = contract
        self._by_tool: dict[str, tuple[Rule, ...]] = {
            name: tuple(rule for rule in rules if rule.tool in (name, ANY_TOOL))
            for name in contract.names
        }
        """The rules that may answer each tool of the contract, in file order."""

    def execute(self, call: ToolCall) -> Execution:
        """Answer one call without touching any real system."""
        if self._contract.get(call.name) is None:
            return _fail(call, ToolFailure("UNKNOWN_TOOL", f"No tool {call.name!r}", False))
        if call.arguments is None:
            return _fail(
                call,
                ToolFailure("INVALID_ARGUMENTS", "Arguments are not a JSON object", True),
            )
        violations = self._contract.validator(call.name).violations(call.arguments)
        if violations:
            detail = "; ".join(f"{v.pointer or '/'}: {v.message}" for v in violations)
            return _fail(call, ToolFailure("INVALID_ARGUMENTS", detail, True))
        arguments = call.arguments
        for rule in self._by_tool[call.name]:
            if all(
                key in arguments and same_value(arguments[key], value)
                for key, value in rule.when.items()
            ):
                if rule.error is not None:
                    return _fail(call, rule.error)
                content = {"ok": True, **(rule.result or {})}
                return Execution(ToolResult(call.call_id, call.name, content))
        return _fail(
            call,
            ToolFailure("NO_MATCHING_RULE", "The fake executor has no answer", False),
        )


def _fail(call: ToolCall, failure: ToolFailure) -> Execution:
    content = {"ok": False, "error": {"code": failure.code, "message": failure.message}}
    return Execution(ToolResult(call.call_id, call.name, content, is_error=True), failure)


def load_executor(path: str | Path, contract: Contract) -> FakeExecutor:
    """Load tool-result rules: {"rules": [{"tool", "when"?, "result" | "error"}]}."""
    path = Path(path)
    document, text = load_json(path)
    problems: list[Problem] = []

    def problem(where: str, message: str) -> None:
        problems.append(Problem(path, line_of(text, where), message))

    if not isinstance(document, dict) or not isinstance(document.get("rules"), list):
        raise InputError.at(path, 1, 'tool results are {"rules": [...]}')
    for key in sorted(set(document) - FILE_KEYS):
        problem(pointer(key), f"unknown key {key!r} (allowed: note, rules)")
    rules: list[Rule] = []
    for index, raw in enumerate(document["rules"]):
        where = pointer("rules", index)
        label = f"rule #{index + 1}"
        if not isinstance(raw, dict):
            problem(where, f"{label} is not a JSON object")
            continue
        for key in sorted(set(raw) - RULE_KEYS):
            problem(where + pointer(key), f"{label}: unknown key {key!r}")
        tool = raw.get("tool")
        if not isinstance(tool, str) or (tool != ANY_TOOL and contract.get(tool) is None):
            shown = ", ".join(contract.names[:12]) + (", ..." if len(contract.names) > 12 else "")
            problem(
                where + pointer("tool"),
                f"{label}: tool {tool!r} is not in the contract (it has: {shown}; "
                'or "*" for any tool)',
            )
            continue
        when = raw.get("when", {})
        if not isinstance(when, dict):
            problem(where + pointer("when"), f"{label}: when must be a JSON object")
            continue
        if ("result" in raw) == ("error" in raw):
            problem(where, f'{label}: give exactly one of "result" or "error"')
            continue
        result = raw.get("result")
        if "result" in raw and not isinstance(result, dict):
            problem(where + pointer("result"), f"{label}: result must be a JSON object")
            continue
        error = None
        if "error" in raw:
            error = _failure(raw["error"])
            if error is None:
                problem(
                    where + pointer("error"),
                    f'{label}: error must be {{"code": str, "message": str, '
                    '"retryable": true|false}',
                )
                continue
        rules.append(Rule(tool, when, result, error))
    if problems:
        raise InputError(problems)
    return FakeExecutor(tuple(rules), contract)


def _failure(raw: Any) -> ToolFailure | None:
    if (
        isinstance(raw, dict)
        and set(raw) == ERROR_KEYS
        and isinstance(raw["code"], str)
        and isinstance(raw["message"], str)
        and isinstance(raw["retryable"], bool)
    ):
        return ToolFailure(raw["code"], raw["message"], raw["retryable"])
    return None
