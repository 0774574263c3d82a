"""The cost of a completed operation: every turn and retry counted; replay shows the recording."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run
from fcreplay.operation import percentile
from fcreplay.simulator.server import running_simulator

from .conftest import ROOT

SCRIPT = ROOT / "cases" / "delivery_simulator.json"
PRICES = """
[prices.fcreplay-sim-careful]
input_per_mtok = 2.0
output_per_mtok = 8.0
"""


def test_percentiles_are_nearest_rank() -> None:
    values = list(range(1, 21))
    assert (percentile(values, 50), percentile(values, 95)) == (10, 19)
    assert percentile([7], 95) == 7 and percentile([], 50) is None


def operation(config: Path, capsys: pytest.CaptureFixture[str], run_id: str) -> dict[str, Any]:
    assert run(["report", run_id, "--format", "json", "--config", str(config)]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    figures: dict[str, Any] = result["operation"]
    return figures


def test_a_retry_and_a_second_turn_count_in_the_operation_and_replay_reports_the_recording(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = json.loads(SCRIPT.read_text(encoding="utf-8"))
    # The first request of the case is rate-limited once; its retry is answered.
    script["cases"]["direct_lookup"]["faults"] = [
        {"kind": "error", "status": 429, "retry_after": 0}
    ]
    shutil.copy(ROOT / "cases" / "delivery_results.json", suite_dir / "cases")
    config = suite_dir / "fcreplay.toml"
    selection = ["--target", "sim-openai-chat", "--variant", "auto", "--case", "direct_lookup"]
    with running_simulator(script, port=0, latency=0.01) as url:
        text = config.read_text(encoding="utf-8").replace("http://127.0.0.1:8765", url)
        config.write_text(text + PRICES, encoding="utf-8")
        code = run(["record", "--config", str(config), *selection])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "429 from sim-openai-chat, retry 1/3 in 0.0 s" in err
    (recorded,) = (suite_dir / "runs").glob("*-record-*.jsonl")
    live = operation(config, capsys, recorded.stem)
    # Two turns each (the call, then the answer after its result); attempt 1 also had
    # the rate-limited request: 3 + 2 + 2 requests. The simulator states 10 ms a request.
    assert live["completed"] == 3 and live["requests_per_completed"] == round(7 / 3, 2)
    assert (live["latency_ms_p50"], live["latency_ms_p95"]) == (20, 30)
    assert live["tokens_p50"] > 0 and live["cost_p50"] > 0
    assert live["cost_total"] == pytest.approx(3 * live["cost_p50"], rel=0.2)
    assert live["transport_error_rate"] == 0.0

    assert run(["replay", "--config", str(config), *selection]) == 0
    capsys.readouterr()
    (replayed,) = (suite_dir / "runs").glob("*-replay-*.jsonl")
    assert operation(config, capsys, replayed.stem) == live  # the recorded figures, not its own
