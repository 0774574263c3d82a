"""Checks a decision against the contract and a case's expectation, returning findings."""

from __future__ import annotations

from typing import Any

from fcreplay.canonical import canonical_json
from fcreplay.decision import Decision, ToolCall
from fcreplay.finding import Finding, FindingCode
from fcreplay.inputs.cases import Case, Expectation, ExpectedCall, parse_expectation
from fcreplay.inputs.contract import Contract
from fcreplay.judge.assignment import match_pairs
from fcreplay.judge.bfcl import pair_in_order
from fcreplay.judge.matchers import argument_differences
from fcreplay.sources import pointer
from fcreplay.strictjson import check_value, exact_json

_KEYWORD_CODES: dict[str, FindingCode] = {
    "required": "missing_required",
    "dependentRequired": "missing_required",
    "additionalProperties": "additional_property",
    "unevaluatedProperties": "additional_property",
    "type": "type_mismatch",
    "enum": "enum_mismatch",
    "const": "enum_mismatch",
    "pattern": "pattern_mismatch",
    "format": "pattern_mismatch",
    **dict.fromkeys(
        (
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
        ),
        "out_of_range",
    ),
}
# Matching costs: a wrong tool is worse than any number of argument differences,
# and leaving a call unmatched is worse than pairing it with the wrong tool.
_WRONG_TOOL_COST = 1000.0
_UNMATCHED_COST = 5000.0


def validate_call(
    call: ToolCall, contract: Contract, expected: Expectation | dict[str, Any] | None = None
) -> list[Finding]:
    """Check one call against the contract and, if given, a case's `expect` object
    (an Expectation, or the JSONL dict; ValueError when the dict is malformed)."""
    if isinstance(expected, dict):
        expected = parse_expectation(expected, contract)
    if expected is None:
        return _call_findings(call, contract, None, "")
    if expected.kind != "tool_call" or not expected.calls:
        return _unexpected(call, contract, expected, "")
    candidates = [_call_findings(call, contract, wanted, "") for wanted in expected.calls]
    best = min(candidates, key=_cost)
    return best + _unsafe(call, contract, expected, "")


def validate_decision(
    decision: Decision, case: Case | Expectation | dict[str, Any], contract: Contract
) -> list[Finding]:
    """Check a first-turn decision against a case's `expect`: the Case, its Expectation, or
    the JSONL dict (ValueError when the dict is malformed)."""
    if isinstance(case, Case):
        return judge_expectation(decision, case.expect, contract)
    return judge_expectation(decision, parse_expectation(case, contract), contract)


def judge_expectation(
    decision: Decision,
    expected: Expectation,
    contract: Contract,
    *,
    after_error: bool = False,
) -> list[Finding]:
    """Check a decision against an expectation.

    `after_error` marks a turn that follows a failed tool result: saying a
    forbidden phrase there is a false success rather than a plain text mismatch.
    Judged once per distinct decision, expectation and contract: repetitions and
    variants of a case bring the same answers again.
    """
    key = _judged_key(decision, after_error)
    if key is None:
        return _judge(decision, expected, contract, after_error)
    known = _JUDGED.get((id(expected), id(contract), key))
    if known is not None and known[0] is expected and known[1] is contract:
        return list(known[2])
    findings = _judge(decision, expected, contract, after_error)
    if len(_JUDGED) >= 8192:
        _JUDGED.clear()
    _JUDGED[(id(expected), id(contract), key)] = (expected, contract, tuple(findings))
    return findings


_JUDGED: dict[tuple[int, int, bytes], tuple[Expectation, Contract, tuple[Finding, ...]]] = {}
"""Findings by expectation and contract (held, so their ids are not reused) and decision."""


def _judged_key(decision: Decision, after_error: bool) -> bytes | None:
    """What judging reads of a decision, as exact bytes (which tell `1` from `1.0` and
    `true`); None when it cannot be written so, or may hold NaN (written as null)."""
    calls = [[call.name, call.arguments, call.raw_arguments] for call in decision.calls]
    text = decision.text
    # A missing text leaves its place out (three members, not four), so that its `null`
    # does not send every call's decision (most have no text) through the NaN walk.
    key = exact_json(
        [decision.kind, after_error, calls]
        if text is None
        else [decision.kind, after_error, calls, text]
    )
    if key is None or (b"null" in key and check_value(calls, 10**6) is not None):
        return None
    return key


def _judge(
    decision: Decision, expected: Expectation, contract: Contract, after_error: bool
) -> list[Finding]:
    findings: list[Finding] = []
    if expected.kind == "tool_call":
        findings += _match_calls(decision, expected, contract)
    else:
        if (
            decision.kind in ("text", "refusal")
            and expected.kind != "no_call"
            and decision.kind != expected.kind
        ):
            findings.append(
                Finding(
                    "text_mismatch",
                    "/kind",
                    expected.kind,
                    decision.kind,
                    f"expected a {expected.kind} answer, got a {decision.kind}",
                )
            )
        for index, call in enumerate(decision.calls):
            prefix = pointer("calls", index)
            if expected.must_not_call:
                findings += _unexpected(call, contract, expected, prefix)
            else:
                findings += _call_findings(call, contract, None, prefix)
                findings += _unsafe(call, contract, expected, prefix)
    findings += _text_findings(decision, expected, after_error)
    return findings


def _match_calls(decision: Decision, expected: Expectation, contract: Contract) -> list[Finding]:
    # Sorting first makes the matching independent of the order the model used.
    order = sorted(
        range(len(decision.calls)),
        key=lambda i: (decision.calls[i].name, _argument_key(decision.calls[i])),
    )
    actual = [decision.calls[i] for i in order]
    pair_findings = [
        [
            _call_findings(call, contract, wanted, pointer("calls", order[row]))
            for wanted in expected.calls
        ]
        for row, call in enumerate(actual)
    ]
    costs = [[_cost(cell) for cell in row] for row in pair_findings]
    if expected.rules == "bfcl":
        pairs, lone_actual, lone_expected = _bfcl_pairs(decision, order, costs)
    else:
        pairs, lone_actual, lone_expected = match_pairs(
            costs, len(expected.calls), _UNMATCHED_COST, _UNMATCHED_COST
        )
    findings: list[Finding] = []
    for row, col in pairs:
        findings += pair_findings[row][col]
        findings += _unsafe(actual[row], contract, expected, pointer("calls", order[row]))
    for row in lone_actual:
        findings += _unexpected(actual[row], contract, expected, pointer("calls", order[row]))
    for col in lone_expected:
        wanted = expected.calls[col]
        findings.append(
            Finding(
                "missing_call",
                pointer("calls"),
                {"tool": wanted.tool, "arguments": wanted.arguments},
                None,
                f"expected a call to {wanted.tool}"
                + (f"; the model answered with {decision.kind}" if not decision.calls else ""),
            )
        )
    return sorted(findings, key=lambda f: (f.path, f.code))


def _call_findings(
    call: ToolCall, contract: Contract, wanted: ExpectedCall | None, prefix: str
) -> list[Finding]:
    findings: list[Finding] = []
    spec = contract.get(call.name)
    if spec is None:
        return [
            Finding(
                "unknown_tool",
                prefix + "/name",
                wanted.tool if wanted else sorted(contract.names),
                call.name,
                f"the model called {call.name!r}, which the contract does not declare",
            )
        ]
    same_tool = wanted is None or wanted.tool == call.name
    if not same_tool:
        assert wanted is not None
        findings.append(
            Finding(
                "wrong_tool",
                prefix + "/name",
                wanted.tool,
                call.name,
                f"expected {wanted.tool}, the model called {call.name}",
            )
        )
    if call.arguments is None:
        findings.append(
            Finding(
                "invalid_json",
                prefix + "/arguments",
                "a JSON object",
                call.raw_arguments,
                f"{call.name}: arguments are not a JSON object; kept raw, not repaired",
            )
        )
        return findings
    base = prefix + "/arguments"
    for violation in contract.validator(call.name).violations(call.arguments):
        findings.append(
            Finding(
                _KEYWORD_CODES.get(violation.keyword, "schema_violation"),
                base + violation.pointer,
                violation.schema_value,
                violation.instance,
                f"{call.name}: {violation.message}",
            )
        )
    if same_tool and wanted is not None:
        for mismatch in argument_differences(wanted, call.arguments, spec.parameters):
            findings.append(
                Finding(
                    "argument_mismatch",
                    base + mismatch.pointer,
                    mismatch.expected,
                    mismatch.actual,
                    f"{call.name}{mismatch.pointer or '/'}: {mismatch.message}",
                    matcher=mismatch.matcher,
                )
            )
    return findings


def _unexpected(
    call: ToolCall, contract: Contract, expected: Expectation, prefix: str
) -> list[Finding]:
    findings = [
        Finding(
            "unexpected_call",
            prefix or "/calls",
            None,
            {"tool": call.name, "arguments": call.arguments},
            f"the model called {call.name}, which the case does not expect",
        )
    ]
    if contract.get(call.name) is None:
        findings += _call_findings(call, contract, None, prefix)
    return findings + _unsafe(call, contract, expected, prefix)


def _unsafe(
    call: ToolCall, contract: Contract, expected: Expectation, prefix: str
) -> list[Finding]:
    spec = contract.get(call.name)
    if spec is None or spec.effect != "write" or call.name in expected.tools:
        return []
    return [
        Finding(
            "unsafe_call",
            prefix + "/name",
            None,
            call.name,
            f"{call.name} changes state and the case does not ask for it",
        )
    ]


def _text_findings(decision: Decision, expected: Expectation, after_error: bool) -> list[Finding]:
    text = (decision.text or "").casefold()
    findings: list[Finding] = []
    if expected.contains_any and not any(
        phrase.casefold() in text for phrase in expected.contains_any
    ):
        findings.append(
            Finding(
                "text_mismatch",
                "/text",
                list(expected.contains_any),
                decision.text,
                "the answer contains none of the expected phrases",
            )
        )
    for phrase in expected.must_not_contain:
        if phrase.casefold() in text:
            findings.append(
                Finding(
                    "false_success" if after_error else "text_mismatch",
                    "/text",
                    {"must_not_contain": phrase},
                    decision.text,
                    (
                        f"the answer claims success ({phrase!r}) after a failed tool call"
                        if after_error
                        else f"the answer contains the forbidden phrase {phrase!r}"
                    ),
                )
            )
    return findings


def _argument_key(call: ToolCall) -> str:
    if call.arguments is not None:
        return canonical_json(call.arguments)
    return canonical_json(call.raw_arguments)


def _bfcl_pairs(
    decision: Decision, order: list[int], costs: list[list[float]]
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """BFCL's order rule first (`judge.bfcl.pair_in_order`, the model's order), then the
    usual optimal matching for whatever it left, so a failure still names its findings."""
    row_of = {call_index: row for row, call_index in enumerate(order)}
    rows = [row_of[index] for index in range(len(decision.calls))]
    columns = len(costs[0]) if costs else 0
    greedy = pair_in_order(columns, len(rows), lambda r, c: costs[rows[r]][c] == 0)
    pairs = [(rows[r], c) for r, c in greedy]
    left_rows = [r for r in range(len(rows)) if r not in {p for p, _ in pairs}]
    left_cols = [c for c in range(columns) if c not in {c for _, c in pairs}]
    rest, lone_rows, lone_cols = match_pairs(
        [[costs[r][c] for c in left_cols] for r in left_rows],
        len(left_cols),
        _UNMATCHED_COST,
        _UNMATCHED_COST,
    )
    pairs += [(left_rows[r], left_cols[c]) for r, c in rest]
    return pairs, [left_rows[r] for r in lone_rows], [left_cols[c] for c in lone_cols]


def _cost(findings: list[Finding]) -> float:
    return sum(
        _WRONG_TOOL_COST if f.code in ("wrong_tool", "unknown_tool") else 1.0 for f in findings
    )
