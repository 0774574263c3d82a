"""Argument matchers: each one's pass and fail, the finding that names it, and exact by default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fcreplay.decision import Decision, ToolCall
from fcreplay.errors import InputError
from fcreplay.finding import Finding
from fcreplay.inputs.cases import Case, load_cases
from fcreplay.inputs.contract import Contract, load_contract
from fcreplay.judge.expectations import validate_decision

from .conftest import ROOT

TEMPLATE = ROOT / "fcreplay" / "templates" / "bugtracker"


@pytest.fixture(scope="module")
def bugs() -> Contract:
    return load_contract(TEMPLATE / "contracts" / "bugtracker_tools.json")


def case(tmp_path: Path, contract: Contract, expect: dict[str, Any], **extra: Any) -> Case:
    path = tmp_path / "cases.jsonl"
    line = {"id": "c", "user": "file it", "expect": expect, **extra}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    (loaded,) = load_cases(path, contract)
    return loaded


def problems(tmp_path: Path, contract: Contract, expect: dict[str, Any]) -> str:
    with pytest.raises(InputError) as caught:
        case(tmp_path, contract, expect)
    return str(caught.value.problems[0])


def judge(the_case: Case, contract: Contract, *calls: tuple[str, dict[str, Any]]) -> list[Finding]:
    decision = Decision(
        "tool_call",
        calls=tuple(
            ToolCall(f"c{i}", name, args, json.dumps(args)) for i, (name, args) in enumerate(calls)
        ),
    )
    return validate_decision(decision, the_case, contract)


BUG = {
    "kind": "tool_call",
    "tool": "create_bug",
    "arguments": {"title": "Typo on the pricing page", "severity": "minor"},
    "match": {"/title": "normalized", "/steps": "optional"},
}


def test_the_issue_example_passes_normalized_without_steps_and_fails_naming_the_matcher(
    tmp_path: Path, bugs: Contract
) -> None:
    the_case = case(tmp_path, bugs, BUG)
    ok = {"title": "typo on the pricing page", "severity": "minor"}
    assert judge(the_case, bugs, ("create_bug", ok)) == []
    assert judge(the_case, bugs, ("create_bug", {**ok, "steps": []})) == []
    assert judge(the_case, bugs, ("create_bug", {**ok, "title": "TYPO on the pricing-page!"})) == []
    (finding,) = judge(the_case, bugs, ("create_bug", {**ok, "title": "Broken login button"}))
    assert finding.code == "argument_mismatch"
    assert finding.path == "/calls/0/arguments/title"
    assert finding.matcher == "normalized"
    assert "matcher: normalized" in finding.message
    assert finding.to_json()["matcher"] == "normalized"
    assert Finding.from_json(finding.to_json()) == finding


def test_exact_stays_the_default(tmp_path: Path, bugs: Contract) -> None:
    exact = {key: BUG[key] for key in ("kind", "tool", "arguments")}
    the_case = case(tmp_path, bugs, exact)
    findings = judge(
        the_case, bugs, ("create_bug", {"title": "typo on the pricing page", "severity": "minor"})
    )
    assert [(f.code, f.matcher) for f in findings] == [("argument_mismatch", None)]
    findings = judge(the_case, bugs, ("create_bug", {**exact["arguments"], "steps": []}))
    assert [f.path for f in findings] == ["/calls/0/arguments/steps"]
    assert "to_json" and "matcher" not in findings[0].to_json()


@pytest.mark.parametrize(
    ("match", "arguments", "good", "bad", "name"),
    [
        (
            {"/severity": {"any_of": ["minor", "trivial"]}},
            {"title": "T t t"},
            {"severity": "trivial"},
            {"severity": "major"},
            "any_of",
        ),
        (
            {"/title": {"regex": "Typo .*"}},
            {"severity": "minor"},
            {"title": "Typo on it"},
            {"title": "a typo"},
            "regex",
        ),
        ({"/title": "present"}, {"severity": "minor"}, {"title": "anything at all"}, {}, "present"),
        (
            {"/steps": "set"},
            {"title": "T t t", "severity": "minor", "steps": ["a", "b"]},
            {"steps": ["b", "a"]},
            {"steps": ["a"]},
            "array:set",
        ),
        (
            {"/steps": "subset"},
            {"title": "T t t", "severity": "minor", "steps": ["a", "b"]},
            {"steps": ["b"]},
            {"steps": ["c"]},
            "array:subset",
        ),
        (
            {"/steps": "contains"},
            {"title": "T t t", "severity": "minor", "steps": ["a"]},
            {"steps": ["x", "a"]},
            {"steps": ["x"]},
            "array:contains",
        ),
        (
            {"/steps": {"array": "set", "normalized": True}},
            {"title": "T t t", "severity": "minor", "steps": ["Open Cart"]},
            {"steps": ["open cart."]},
            {"steps": ["close cart"]},
            "normalized+array:set",
        ),
    ],
)
def test_each_matcher_passes_and_fails(
    tmp_path: Path, bugs: Contract, match: Any, arguments: Any, good: Any, bad: Any, name: str
) -> None:
    base = {"title": "T t t", "severity": "minor"}
    the_case = case(
        tmp_path,
        bugs,
        {"kind": "tool_call", "tool": "create_bug", "arguments": arguments, "match": match},
    )
    assert judge(the_case, bugs, ("create_bug", {**base, **arguments, **good})) == []
    sent = {**base, **arguments, **bad}
    if not bad:
        sent.pop("title")
    findings = [
        f for f in judge(the_case, bugs, ("create_bug", sent)) if f.code == "argument_mismatch"
    ]
    assert findings and {f.matcher for f in findings} == {name}


def test_tolerance_compares_numbers_within_the_bound(tmp_path: Path, contract: Contract) -> None:
    expect = {
        "kind": "tool_call",
        "tool": "quote_delivery",
        "arguments": {"origin": "A", "destination": "B", "weight_kg": 2.5, "service": "express"},
        "match": {"/weight_kg": {"tolerance": 0.1}},
    }
    the_case = case(tmp_path, contract, expect)
    args = dict(expect["arguments"])  # type: ignore[call-overload]
    assert judge(the_case, contract, ("quote_delivery", {**args, "weight_kg": 2.55})) == []
    (finding,) = judge(the_case, contract, ("quote_delivery", {**args, "weight_kg": 2.7}))
    assert finding.matcher == "tolerance"


def test_matchers_never_loosen_the_schema(tmp_path: Path, bugs: Contract) -> None:
    the_case = case(
        tmp_path,
        bugs,
        {
            **BUG,
            "match": {"/title": "present", "/steps": "optional"},
            "arguments": {"severity": "minor"},
        },
    )
    findings = judge(
        the_case, bugs, ("create_bug", {"title": "x", "severity": "minor", "steps": "no"})
    )
    assert {f.code for f in findings} == {"out_of_range", "type_mismatch"}


@pytest.mark.parametrize(
    ("match", "arguments", "message"),
    [
        ({"title": "normalized"}, {"title": "x"}, "must be a JSON pointer"),
        ({"/title": "fuzzy"}, {"title": "xyz"}, "unknown matcher 'fuzzy'"),
        ({"/title": {"like": 1}}, {"title": "xyz"}, "unknown key 'like'"),
        ({"/title": {"any_of": ["a"]}}, {"title": "xyz", "severity": "minor"}, "not both"),
        ({"/title": {"regex": "("}}, {"severity": "minor"}, "does not compile"),
        ({"/title": "normalized"}, {"severity": "minor"}, "no expected value"),
        ({"/a/b": "optional"}, {"severity": "minor", "title": "xyz"}, "is not an object or array"),
        (
            {"/title": {"present": True, "optional": True}},
            {"severity": "minor"},
            "present stands alone",
        ),
        ({"/title": {"tolerance": -1}}, {"title": "xyz", "severity": "minor"}, "tolerance must be"),
    ],
)
def test_bad_matchers_are_input_errors_with_the_line(
    tmp_path: Path, bugs: Contract, match: Any, arguments: Any, message: str
) -> None:
    text = problems(
        tmp_path,
        bugs,
        {"kind": "tool_call", "tool": "create_bug", "arguments": arguments, "match": match},
    )
    assert text.startswith(f"{tmp_path / 'cases.jsonl'}:1: ")
    assert message in text


def test_the_skeleton_of_a_matched_call_is_still_checked_against_the_schema(
    tmp_path: Path, bugs: Contract
) -> None:
    text = problems(tmp_path, bugs, {**BUG, "arguments": {"title": "T t t", "severity": "urgent"}})
    assert "rejected by create_bug's own schema" in text and "/severity" in text


def test_no_call_accepts_text_and_refusal_but_not_a_call(tmp_path: Path, bugs: Contract) -> None:
    the_case = case(tmp_path, bugs, {"kind": "no_call"})
    for kind in ("text", "refusal"):
        assert validate_decision(Decision(kind, text="no"), the_case, bugs) == []  # type: ignore[arg-type]
    findings = judge(the_case, bugs, ("get_test_case", {"test_id": "TC-0001"}))
    assert [f.code for f in findings] == ["unexpected_call"]
