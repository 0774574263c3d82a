"""Stale recordings are their own class: a prompt or contract edit is never called a regression."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fcreplay.cli import run
from fcreplay.engine.runner import ReplayOptions, replay
from fcreplay.golden.diff import diff_run
from fcreplay.inputs.suite import load_suite
from fcreplay.render.golden_markdown import DEFAULT_MAX_CHARS, render_markdown

from .conftest import ROOT
from .recorded_suite import recorded_copy

EDITED = ("2. Не придумывай обязательные аргументы.", "2. Никогда не придумывай аргументы.")


@pytest.fixture
def example(suite_dir: Path) -> Path:
    """A copy of the example suite with its cassettes and goldens; its config path."""
    for folder in ("cassettes", "golden"):
        shutil.copytree(ROOT / folder, suite_dir / folder)
    return suite_dir / "fcreplay.toml"


def cli(config: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run([*args, "--config", str(config)])
    return code, capsys.readouterr().out


def test_a_one_line_prompt_edit_makes_every_unit_stale_not_a_regression(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = example.parent / "contracts" / "delivery_prompt.txt"
    text = prompt.read_text(encoding="utf-8")
    assert EDITED[0] in text
    prompt.write_text(text.replace(*EDITED), encoding="utf-8")
    code, out = cli(example, capsys, "check")
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("stale: 184 units, the system prompt changed since recording")
    assert first.endswith("re-record them with: fcreplay record")
    assert "regression" not in out.replace("0 regression", "")
    # The drift shows the edited words on both sides, cut at the same place.
    recorded = next(line for line in out.splitlines() if "recorded: " in line)
    now = next(line for line in out.splitlines() if "now:      " in line)
    assert "Не придумывай обязательные" in recorded and "Никогда не придумывай аргум" in now
    assert "… and 164 more units (see " in out and "`fcreplay replay --target" in out

    code, markdown = cli(example, capsys, "golden", "diff", "--format", "markdown")
    assert code == 1
    assert len(markdown) < DEFAULT_MAX_CHARS
    assert "### Regressions" not in markdown and "regression" not in markdown
    assert "### Stale recordings: 184 entries in 13 cases" in markdown
    assert "```sh\nfcreplay record\n```" in markdown
    code, junit = cli(example, capsys, "golden", "diff", "--format", "junit")
    assert 'type="stale"' in junit and 'type="regression"' not in junit
    code, data = cli(example, capsys, "golden", "diff", "--format", "json")
    counts = json.loads(data)["counts"]
    assert (counts["stale"], counts["regression"]) == (184, 0)


def test_a_dropped_enum_is_stale_in_every_unit_that_sends_the_tool(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = example.parent / "contracts" / "delivery_tools.json"
    tools = json.loads(contract.read_text(encoding="utf-8"))
    for tool in tools:
        tool["parameters"]["properties"].get("service", {}).pop("enum", None)
    contract.write_text(json.dumps(tools, ensure_ascii=False), encoding="utf-8")
    code, out = cli(example, capsys, "check")
    assert code == 1
    first, *_ = out.splitlines()
    # no_tools declares no tools, so its recordings still match.
    assert first.startswith("stale: 132 units, the tool contract changed since recording")
    assert first.endswith("fcreplay record --variant auto --variant forced --variant reversed")
    assert (
        'parameters of tool quote_delivery at /properties/service/enum: recorded ["standard"' in out
    )


def test_a_reordered_contract_is_one_tool_order_change_with_its_moves(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = example.parent / "contracts" / "delivery_tools.json"
    tools = json.loads(contract.read_text(encoding="utf-8"))
    contract.write_text(json.dumps(tools[::-1], ensure_ascii=False), encoding="utf-8")
    _, out = cli(example, capsys, "check")
    assert (
        "tool order: recorded get_order, quote_delivery, cancel_order; now cancel_order, "
        "quote_delivery, get_order (moves: get_order 1→3, cancel_order 3→1)"
    ) in out
    assert "/tools/0/function" not in out


def test_the_worst_case_pull_request_comment_stays_under_the_cap(example: Path) -> None:
    """Every golden entry differs from the run, each with argument changes or new findings."""
    for path in (example.parent / "golden").glob("*.json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        for variants in document["entries"].values():
            for entry in variants.values():
                entry["verdict"], entry["findings"] = "pass", []
                entry["verdicts"] = {"pass": 3}
                entry["signatures"] = [
                    {
                        "signature": ["tool_call", ["get_order"], '[{"order_id":"ORD-000000"}]'],
                        "count": 3,
                    }
                ]
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    suite = load_suite(example)
    result = replay(suite, ReplayOptions())
    diff = diff_run(result.records, suite.config.golden, scope=result.scope)
    assert not diff.unchanged and len(diff.diffs) == 184
    full = render_markdown(diff, max_chars=None)
    capped = render_markdown(diff, full_report="golden-diff-full.md")
    assert len(full) > DEFAULT_MAX_CHARS  # the cap is what keeps it postable
    assert len(capped) <= DEFAULT_MAX_CHARS
    assert capped.index("### Regressions") < capped.index("### Changed decisions")
    assert "Cut to fit 60,000 characters; not shown:" in capped
    assert "`golden-diff-full.md` (kept with this workflow run's artifacts)" in capped
    assert capped.count("accept with `fcreplay golden update") == 1


def test_lint_warns_when_the_prompt_moved_but_its_version_did_not(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = recorded_copy(tmp_path_factory, tmp_path)
    config = suite / "fcreplay.toml"
    assert cli(config, capsys, "lint")[1].count("warning  ") == 0
    prompt = suite / "contracts" / "delivery_prompt.txt"
    prompt.write_text(prompt.read_text(encoding="utf-8").replace(*EDITED), encoding="utf-8")
    code, out = cli(config, capsys, "lint")
    assert code == 0  # a warning never fails lint
    assert "the prompt text differs from the one 28 cassettes were recorded with" in out
    assert "but prompt_version is still 'test-prompt-v1'" in out
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("test-prompt-v1", "test-prompt-v2"), encoding="utf-8")
    assert "prompt text differs" not in cli(config, capsys, "lint")[1]
