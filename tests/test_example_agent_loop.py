"""examples/agent_loop: its own test suite passes offline, alone and under xdist, and catches
the deliberate adapter bugs docs/pytest.md walks through."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("xdist")

EXAMPLE = ROOT / "examples" / "agent_loop"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    copy = tmp_path / "agent_loop"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("runs", "__pycache__"))
    return copy


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_log(folder: Path) -> list[dict[str, Any]]:
    """The newest run log's records without what differs between runs (id, timing)."""
    newest = sorted((folder / "runs").glob("*.jsonl"))[-1]
    lines = [json.loads(line) for line in newest.read_text(encoding="utf-8").splitlines()]
    *records, end = lines
    assert end["run_end"]["finished"] is True  # the last line says the session finished
    for record in records:
        del record["run_id"], record["elapsed_ms"]
    return records


def test_the_example_passes_offline_with_the_same_run_log_under_xdist(example: Path) -> None:
    cassettes = {p: p.read_bytes() for p in (example / "tests" / "cassettes").rglob("*.json")}
    alone = run_pytest(example, "-n", "0")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert "6 passed" in alone.stdout
    assert "fcreplay golden: 4 checked, 0 written, 0 unused" in alone.stdout
    sequential = run_log(example)
    assert len(sequential) == 12 and {r["verdict"] for r in sequential} == {"pass"}
    parallel = run_pytest(example, "-n", "2")
    assert parallel.returncode == 0, parallel.stdout + parallel.stderr
    assert run_log(example) == sequential
    assert not list((example / "runs").glob(".*.part"))  # the workers' parts were merged
    after = {p: p.read_bytes() for p in (example / "tests" / "cassettes").rglob("*.json")}
    assert after == cassettes


def test_a_dropped_required_fails_assert_tools(example: Path) -> None:
    tools = example / "agent_loop" / "tools.py"
    text = tools.read_text(encoding="utf-8")
    tools.write_text(text.replace('"required": ["title", "severity"],', "", 1), encoding="utf-8")
    result = run_pytest(
        example, "tests/test_anthropic_loop.py::test_the_tools_sent_match_the_contract"
    )
    assert result.returncode == 1
    assert (
        "tool create_bug: /create_bug/parameters/required: semantic_change: "
        'contract ["title", "severity"], sent (missing)'
    ) in result.stdout


def test_split_parallel_results_fail_assert_history(example: Path) -> None:
    loop = example / "agent_loop" / "anthropic_loop.py"
    text = loop.read_text(encoding="utf-8")
    split = text.replace(
        'messages.append({"role": "user", "content": results})',
        'messages.extend({"role": "user", "content": [result]} for result in results)',
    )
    assert split != text
    loop.write_text(split, encoding="utf-8")
    result = run_pytest(
        example, "tests/test_anthropic_loop.py::test_parallel_results_go_back_together"
    )
    assert result.returncode == 1
    assert "exchange 1 (POST /v1/messages, no recorded answer): split_results" in result.stdout
    assert "(call ids fcsim_r0_t0_0, fcsim_r0_t0_1)" in result.stdout
