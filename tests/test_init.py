"""`fcreplay init`, then simulate --from-cases, record, golden update and check, unedited."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from fcreplay.cassettes.store import load_cassette
from fcreplay.cli import run
from fcreplay.inputs.suite import load_suite
from fcreplay.runlog import read_run_log
from fcreplay.simulator.from_cases import script_from_cases
from fcreplay.simulator.server import running_simulator

DEFAULT_URL = "http://127.0.0.1:8765"


def init_suite(root: Path) -> Path:
    assert run(["init", str(root)]) == 0
    return root / "fcreplay.toml"


def point_at(config: Path, url: str, model: str | None = None) -> None:
    text = config.read_text(encoding="utf-8").replace(DEFAULT_URL, url)
    if model is not None:
        text = text.replace('"fcreplay-sim-expected"', f'"{model}"')
    config.write_text(text, encoding="utf-8")


def test_init_then_record_golden_update_and_check_pass_and_sloppy_regresses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    config = init_suite(tmp_path / "demo-suite")
    monkeypatch.chdir(config.parent)
    assert run(["lint"]) == 0
    suite = load_suite(config)
    with running_simulator(script_from_cases(suite), port=0) as url:
        point_at(config, url)
        assert run(["record"]) == 0
        assert run(["golden", "update", "--reason", "init"]) == 0
        capsys.readouterr()
        assert run(["check"]) == 0
        assert "check passed" in capsys.readouterr().out

        (log,) = (config.parent / "runs").glob("*-record-*.jsonl")
        records = read_run_log(log).records
        assert records and all(record.verdict == "pass" for record in records)
        # per-case tools: that route declares two of the four tools, reversed reverses them
        cassette = config.parent / "cassettes" / "sim-openai-chat"
        for variant, order in (
            ("auto", ["get_test_case", "create_bug"]),
            ("reversed", ["create_bug", "get_test_case"]),
        ):
            recorded = load_cassette(cassette / variant / "file_bug_with_steps.json")
            sent = recorded.interactions[0].request.body["tools"]  # type: ignore[union-attr]
            assert [tool["function"]["name"] for tool in sent] == order

        point_at(config, url, model="fcreplay-sim-sloppy")
        assert run(["record"]) == 0  # findings are results: recording itself succeeds
        capsys.readouterr()
        assert run(["golden", "diff"]) == 1
        diff = capsys.readouterr().out
    assert "regression" in diff
    for code in (
        "unsafe_call",
        "wrong_tool",
        "additional_property",
        "false_success",
        "type_mismatch",
    ):
        assert code in diff, code
    assert run(["report", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    tags = {entry["tag"] for entry in report["by_tag"]}
    assert {"positive", "ambiguous", "erroneous"} <= tags
    ambiguous = [e for e in report["by_tag"] if e["tag"] == "ambiguous" and e["variant"] == "auto"]
    assert ambiguous and all(e["unsafe_call_rate"] == 1.0 for e in ambiguous)


def test_init_refuses_to_overwrite_and_force_does(tmp_path: Path, capsys: Any) -> None:
    init_suite(tmp_path)
    (tmp_path / "cases" / "bugtracker.jsonl").write_text("mine\n", encoding="utf-8")
    assert run(["init", str(tmp_path)]) == 2
    assert "--force" in capsys.readouterr().err
    assert (tmp_path / "cases" / "bugtracker.jsonl").read_text() == "mine\n"
    assert run(["init", str(tmp_path), "--force"]) == 0
    assert "mine" not in (tmp_path / "cases" / "bugtracker.jsonl").read_text()


def test_simulate_from_cases_command_serves_the_cases(tmp_path: Path) -> None:
    config = init_suite(tmp_path)
    command = [
        sys.executable,
        "-m",
        "fcreplay",
        "simulate",
        "--from-cases",
        "--port",
        "0",
        "--config",
        str(config),
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+) with (\d+) scripted", line)
            assert match, line
            body = {
                "model": "fcreplay-sim-expected",
                "messages": [{"role": "user", "content": "Show me test case TC-1042."}],
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "get_test_case", "parameters": {"type": "object"}},
                    }
                ],
            }
            url = match.group(1) + "/v1/chat/completions"
            answer = httpx.post(url, json=body, timeout=10).json()
        finally:
            process.terminate()
    (call,) = answer["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "get_test_case"
    assert json.loads(call["function"]["arguments"]) == {"test_id": "TC-1042"}


def test_unknown_profile_is_a_usage_error(tmp_path: Path, capsys: Any) -> None:
    config = init_suite(tmp_path)
    assert run(["simulate", "--from-cases", "--profile", "lazy", "--config", str(config)]) == 2
    assert "sloppy" in capsys.readouterr().err
