"""`fcreplay contract import`: MCP, OpenAI chat and Responses, Anthropic and Gemini tools."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run
from fcreplay.inputs.contract import load_contract

FIXTURES = Path(__file__).parent / "fixtures" / "contract_import"


def imported(tmp_path: Path, name: str, *options: str) -> tuple[Path, str]:
    output = tmp_path / "tools.json"
    assert run(["contract", "import", str(FIXTURES / name), "-o", str(output), *options]) == 0
    return output, ""


@pytest.mark.parametrize(
    ("name", "source_format", "tools", "lost"),
    [
        (
            "mcp_tools_list.json",
            "mcp",
            ["search_issues", "close_issue"],
            ["tools[0].annotations", "tools[0].title", "tools[1].outputSchema", "tools[2]"],
        ),
        ("openai_chat_tools.json", "openai_chat", ["get_weather", "ping"], []),
        ("openai_responses_tools.json", "openai_responses", ["get_weather"], ["tools[1]"]),
        ("anthropic_tools.json", "anthropic", ["get_weather"], ["tools[1]"]),
        ("gemini_tools.json", "gemini", ["get_weather", "set_alarm"], []),
    ],
)
def test_each_format_converts_and_lists_what_did_not(
    tmp_path: Path, capsys: Any, name: str, source_format: str, tools: list[str], lost: list[str]
) -> None:
    output = tmp_path / "tools.json"
    assert run(["contract", "import", str(FIXTURES / name), "-o", str(output)]) == 0
    out = capsys.readouterr().out
    assert f"from {source_format} into {output}" in out
    contract = load_contract(output)  # the contract loads: names, schemas, effects checked
    assert list(contract.names) == tools
    assert {tool.effect for tool in contract.tools} == {"write"}
    shown = [line.split()[2].rstrip(":") for line in out.splitlines() if "not converted" in line]
    assert shown == lost


def test_gemini_openapi_types_become_json_schema(tmp_path: Path) -> None:
    output, _ = imported(tmp_path, "gemini_tools.json")
    weather = load_contract(output).by_name["get_weather"].parameters
    assert weather["type"] == "object"
    assert weather["properties"]["days"]["type"] == ["integer", "null"]


def test_read_marks_tools_read_and_mcp_hints_are_only_noted(tmp_path: Path, capsys: Any) -> None:
    output, _ = imported(tmp_path, "mcp_tools_list.json")
    out = capsys.readouterr().out
    assert "hints that search_issues is read-only" in out and "--read search_issues" in out
    assert load_contract(output).by_name["search_issues"].effect == "write"
    imported(tmp_path, "mcp_tools_list.json", "--read", "search_issues", "--force")
    contract = load_contract(output)
    assert contract.by_name["search_issues"].effect == "read"
    assert contract.by_name["close_issue"].effect == "write"


def test_imported_mcp_contract_passes_lint_alone_and_in_a_suite(
    tmp_path: Path, capsys: Any
) -> None:
    output, _ = imported(tmp_path, "mcp_tools_list.json", "--read", "search_issues")
    assert run(["lint", "--contract", str(output)]) == 0
    assert "lint: no problems" in capsys.readouterr().out
    case = {
        "id": "search",
        "user": "Find issues about login",
        "expect": {
            "kind": "tool_call",
            "tool": "search_issues",
            "arguments": {"query": "login"},
            "match": {"/query": "normalized"},
        },
    }
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    config = tmp_path / "fcreplay.toml"
    config.write_text(
        'contract = "tools.json"\ncases = "cases.jsonl"\n'
        + "".join(
            f'[[targets]]\nname = "t-{a}"\nadapter = "{a}"\nmodel = "m"\n'
            for a in ("openai_chat", "openai_responses", "anthropic", "gemini")
        ),
        encoding="utf-8",
    )
    assert run(["lint", "--config", str(config)]) == 0


def test_standard_input_and_standard_output(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    text = (FIXTURES / "anthropic_tools.json").read_text(encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert run(["contract", "import", "-", "--from", "anthropic"]) == 0
    captured = capsys.readouterr()
    assert [tool["name"] for tool in json.loads(captured.out)] == ["get_weather"]
    assert "not converted" in captured.err


def test_bad_inputs_exit_2_naming_the_file(tmp_path: Path, capsys: Any) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"tools": [', encoding="utf-8")
    assert run(["contract", "import", str(broken)]) == 2
    assert str(broken) in capsys.readouterr().err
    nothing = tmp_path / "nothing.json"
    nothing.write_text('{"hello": 1}', encoding="utf-8")
    assert run(["contract", "import", str(nothing)]) == 2
    assert "not a tool list" in capsys.readouterr().err
    assert run(["contract", "import", str(FIXTURES / "gemini_tools.json"), "--from", "nope"]) == 2
    output, _ = imported(tmp_path, "gemini_tools.json")
    assert run(["contract", "import", str(FIXTURES / "gemini_tools.json"), "-o", str(output)]) == 2
    assert "--force" in capsys.readouterr().err
