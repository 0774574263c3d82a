"""The command line: exit codes, lint on good and bad suites, fast start-up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import fcreplay
from fcreplay.cli import run

from .conftest import ROOT


def lint(suite_dir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run(["lint", "--config", str(suite_dir / "fcreplay.toml")])
    out, err = capsys.readouterr()
    return code, out, err


def test_lint_passes_on_the_example_suite(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = lint(suite_dir, capsys)
    assert code == 0, err
    assert "3 tools" in out and "13 cases" in out and "lint: no problems" in out


def test_lint_finds_the_repository_config_by_itself(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT / "cases")
    assert run(["lint"]) == 0


def _break_contract(suite: Path) -> None:
    path = suite / "contracts" / "delivery_tools.json"
    tools = json.loads(path.read_text(encoding="utf-8"))
    tools[2]["effect"] = "destroy"
    path.write_text(json.dumps(tools, indent=2, ensure_ascii=False), encoding="utf-8")


def _append_case(text: str) -> object:
    def change(suite: Path) -> None:
        with (suite / "cases" / "delivery.jsonl").open("a", encoding="utf-8") as stream:
            stream.write(text + "\n")

    return change


BAD_INPUTS = {
    "contract effect": (_break_contract, "delivery_tools.json:", '"destroy"'),
    "case not json": (_append_case("{oops"), "delivery.jsonl:14:", None),
    "case unknown key": (
        _append_case('{"id":"x","user":"u","expect":{"kind":"text"},"sql":1}'),
        "delivery.jsonl:14:",
        None,
    ),
    "case duplicate id": (
        _append_case('{"id":"missing_id","user":"u","expect":{"kind":"text"}}'),
        "delivery.jsonl:14:",
        None,
    ),
    "case unsafe id": (
        _append_case('{"id":"a/b","user":"u","expect":{"kind":"text"}}'),
        "delivery.jsonl:14:",
        None,
    ),
    "case unknown tool": (
        _append_case('{"id":"x","user":"u","expect":{"kind":"tool_call","tool":"refund"}}'),
        "delivery.jsonl:14:",
        None,
    ),
    "case arguments rejected": (
        _append_case(
            '{"id":"x","user":"u","expect":{"kind":"tool_call","tool":"get_order",'
            '"arguments":{"order_id":"42"}}}'
        ),
        "delivery.jsonl:14:",
        None,
    ),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_each_bad_input_exits_2_with_one_line_naming_file_and_line(
    suite_dir: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    change, where, line = BAD_INPUTS[name]
    change(suite_dir)  # type: ignore[operator]
    code, _, err = lint(suite_dir, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert where in lines[0]
    assert "Traceback" not in err
    if line is not None:  # a needle: the error must point at the line that holds it
        text = (suite_dir / "contracts" / "delivery_tools.json").read_text(encoding="utf-8")
        number = next(n for n, row in enumerate(text.splitlines(), 1) if line in row)
        assert f"delivery_tools.json:{number}:" in lines[0]


def test_lint_reports_problems_of_several_files_together(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _append_case("{oops")(suite_dir)  # type: ignore[operator]
    (suite_dir / "cases" / "delivery_results.json").write_text('{"rules": [{"tool": "x"}]}')
    code, _, err = lint(suite_dir, capsys)
    assert code == 2
    assert "delivery.jsonl:14:" in err and "delivery_results.json:1:" in err


def test_bad_config_key_exits_2(suite_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = suite_dir / "fcreplay.toml"
    path.write_text(path.read_text() + "\nrepetition = 2\n")
    code, _, err = lint(suite_dir, capsys)
    assert code == 2 and "repetition: unknown key" in err and "fcreplay.toml:" in err


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["lint", "--no-such-option"]) == 2
    assert run(["no-such-command"]) == 2


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"]) == 0
    assert fcreplay.__version__ in capsys.readouterr().out


def test_python_dash_m_and_help_import_no_heavy_library() -> None:
    script = (
        "import sys, runpy\n"
        "sys.argv = ['fcreplay', '--help']\n"
        "try:\n"
        "    runpy.run_module('fcreplay', run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "heavy = {'jsonschema', 'vcr', 'yaml', 'httpx', 'deepdiff'} & set(sys.modules)\n"
        "print('HEAVY', sorted(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert "Commands:" in result.stdout and "lint" in result.stdout
    assert "HEAVY []" in result.stdout
