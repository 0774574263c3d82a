"""The simulator from the cases: what each profile answers, the script winning, lint's coverage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run
from fcreplay.inputs.suite import Suite, load_suite
from fcreplay.simulator.from_cases import PROFILES, script_from_cases, uncovered
from fcreplay.simulator.reader import load_script
from fcreplay.simulator.script import Answer, Script

from .conftest import ROOT

STARTER = ROOT / "fcreplay" / "templates" / "bugtracker" / "fcreplay.toml"


@pytest.fixture(scope="module")
def starter() -> Suite:
    return load_suite(STARTER)


def first(script: Script, case_id: str, model: str, turn: int = 0) -> Answer:
    (case,) = [c for c in script.cases if c.id == case_id]
    profile = case.profile(model)
    assert profile is not None
    return profile.turns[turn][0]


def calls(answer: Answer) -> list[tuple[str, Any]]:
    return [(call.name, call.arguments) for call in answer.calls]


def test_expected_profile_answers_what_each_case_expects(starter: Suite) -> None:
    script = script_from_cases(starter)
    assert calls(first(script, "compare_two", "fcreplay-sim-expected")) == [
        ("get_test_case", {"test_id": "TC-1042"}),
        ("get_test_case", {"test_id": "TC-2001"}),
    ]
    # title sent as written; optional steps left out; then-turn names the bug
    assert calls(first(script, "file_bug", "expected")) == [
        ("create_bug", {"title": "Typo on the pricing page", "severity": "minor"})
    ]
    assert first(script, "file_bug", "expected", 1).text == "BUG-101"
    # a present matcher gets an example value of the schema's shape
    ((_, steps),) = calls(first(script, "file_bug_with_steps", "expected"))
    assert isinstance(steps["steps"], list)
    assert first(script, "file_bug_vague", "any-other-model").text == "title"


@pytest.mark.parametrize(
    ("profile", "case_id", "check"),
    [
        ("numbers-as-strings", "list_open_major", lambda a: a.calls[0].arguments["limit"] == "5"),
        ("extra-property", "lookup", lambda a: "comment" in a.calls[0].arguments),
        ("wrong-tool", "lookup", lambda a: a.calls[0].name != "get_test_case"),
        ("eager-call", "typo_remark", lambda a: a.calls[0].name == "create_bug"),
    ],
)
def test_each_misbehaviour(starter: Suite, profile: str, case_id: str, check: Any) -> None:
    script = script_from_cases(starter)
    assert check(first(script, case_id, f"fcreplay-sim-{profile}"))


def test_false_success_says_the_forbidden_phrase_after_the_tool_error(starter: Suite) -> None:
    script = script_from_cases(starter)
    answer = first(script, "attach_missing_test", "false-success", 1)
    assert answer.text == "is now attached"
    # where it does not apply, the profile answers as expected
    assert first(script, "lookup", "false-success", 1).text == "Login with SSO"


def test_sloppy_spreads_the_misbehaviours_over_the_cases(starter: Suite) -> None:
    script = script_from_cases(starter)
    expected = script_from_cases(starter, default="expected")
    differ = [
        case.id
        for case in starter.cases
        if first(script, case.id, "sloppy") != first(expected, case.id, "expected")
    ]
    assert set(differ) == {case.id for case in starter.cases}
    assert first(script, "list_open_major", "sloppy").calls[0].arguments["limit"] == "5"


def test_default_profile_answers_unknown_models(starter: Suite) -> None:
    script = script_from_cases(starter, default="eager-call")
    assert first(script, "typo_remark", "some-model").calls
    with pytest.raises(ValueError, match="unknown profile"):
        script_from_cases(starter, default="lazy")
    assert "expected" in PROFILES and "sloppy" in PROFILES


def test_a_script_wins_case_by_case(suite_dir: Path) -> None:
    suite = load_suite(suite_dir / "fcreplay.toml")
    script = load_script(suite_dir / "cases" / "delivery_simulator.json")
    merged = script_from_cases(suite, script)
    scripted = first(script, "missing_id", "fcreplay-sim-hasty")
    assert first(merged, "missing_id", "fcreplay-sim-hasty") == scripted
    assert first(merged, "missing_id", "fcreplay-sim-expected").text == "номер"
    assert merged.fallback_text == script.fallback_text


def test_lint_reports_cases_the_script_does_not_cover(suite_dir: Path, capsys: Any) -> None:
    path = suite_dir / "cases" / "delivery_simulator.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    del document["cases"]["invalid_id"]
    del document["cases"]["missing_id"]["profiles"]["fcreplay-sim-hasty"]
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    assert run(["lint", "--config", str(suite_dir / "fcreplay.toml")]) == 0
    out = capsys.readouterr().out
    assert "11 of 13 cases answered for every target" in out
    assert "not scripted  invalid_id: no scripted case has its last user message" in out
    assert "not scripted  missing_id: no profile for model fcreplay-sim-hasty" in out
    gaps = uncovered(load_script(path), load_suite(suite_dir / "fcreplay.toml"))
    assert [gap.case_id for gap in gaps] == ["missing_id", "invalid_id"]


def test_a_case_without_tools_gets_no_eager_call(tmp_path: Path) -> None:
    shutil.copytree(STARTER.parent, tmp_path, dirs_exist_ok=True)
    case = {"id": "chat", "user": "Hello", "tools": [], "expect": {"kind": "no_call"}}
    (tmp_path / "cases" / "bugtracker.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    suite = load_suite(tmp_path / "fcreplay.toml")
    answer = first(script_from_cases(suite), "chat", "fcreplay-sim-sloppy")
    assert not answer.calls and answer.text


def test_cases_sharing_a_user_message_are_told_apart_by_their_tools(tmp_path: Path) -> None:
    shutil.copytree(STARTER.parent, tmp_path, dirs_exist_ok=True)
    same = "Show me test case TC-1042."
    lines = [
        {
            "id": "look",
            "user": same,
            "tools": ["get_test_case"],
            "expect": {"kind": "tool_call", "tool": "get_test_case"},
        },
        {"id": "ask", "user": same, "tools": ["create_bug"], "expect": {"kind": "no_call"}},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    (tmp_path / "cases" / "bugtracker.jsonl").write_text(text, encoding="utf-8")
    script = script_from_cases(load_suite(tmp_path / "fcreplay.toml"))
    assert script.case_for(same, ("create_bug",)).id == "ask"  # type: ignore[union-attr]
    assert script.case_for(same, ("get_test_case",)).id == "look"  # type: ignore[union-attr]
    assert script.case_for(same).id == "look"  # type: ignore[union-attr]
