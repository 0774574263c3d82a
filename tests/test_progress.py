"""Progress and interruption: the run id first, pace and ETA, retries said, Ctrl-C's resume line."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run
from fcreplay.engine import runner
from fcreplay.engine.progress import Progress
from fcreplay.inputs.suite import load_suite
from fcreplay.neutral import RoundTrip, WireRequest
from fcreplay.runlog import read_run_log
from fcreplay.simulator.server import running_simulator

from .conftest import ROOT
from .records import make_record

SCRIPT = ROOT / "cases" / "delivery_simulator.json"


def test_the_progress_line_tells_pace_and_time_left() -> None:
    stream = io.StringIO()
    progress = Progress(4, stream=stream)
    progress.advance(make_record(attempt=1))
    line = stream.getvalue().splitlines()[-1]
    assert line.startswith("[1/4] 0 with findings, 0 errors  ")
    assert " elapsed, " in line and "/s, ETA " in line and line.endswith("t/auto/c #1")


class Interrupting:
    """A transport that forwards to the simulator until the user presses Ctrl-C."""

    def __init__(self, inner: Any, after: int) -> None:
        self._inner, self._left = inner, after

    def send(self, request: WireRequest) -> RoundTrip:
        self._left -= 1
        if self._left < 0:
            raise KeyboardInterrupt
        result: RoundTrip = self._inner.send(request)
        return result

    def close(self) -> None:
        self._inner.close()


def test_ctrl_c_marks_the_log_unfinished_and_prints_the_resume_command(suite_dir: Path) -> None:
    from fcreplay.engine.transport import HttpTransport

    shutil.copy(ROOT / "cases" / "delivery_results.json", suite_dir / "cases")
    with running_simulator(SCRIPT, port=0) as url:
        config = suite_dir / "fcreplay.toml"
        config.write_text(
            config.read_text(encoding="utf-8").replace("http://127.0.0.1:8765", url),
            encoding="utf-8",
        )
        suite = load_suite(config)
        transport = Interrupting(HttpTransport(url + "/v1", secret_headers={}, timeout=10), 5)
        stream = io.StringIO()
        options = runner.RecordOptions(
            targets=("sim-openai-chat",),
            case_ids=("direct_lookup",),
            transports={"sim-openai-chat": transport},
        )
        with pytest.raises(KeyboardInterrupt):
            runner.record(suite, options, progress=Progress(0, stream=stream))
    said = stream.getvalue().splitlines()
    (log,) = (suite_dir / "runs").glob("*.jsonl")
    assert said[0] == f"record run {log.stem}: 12 attempts, log {log}"
    assert said[-1].startswith("interrupted: ")
    assert said[-1].endswith(
        f"continue with `fcreplay record --resume {log.stem} --target sim-openai-chat "
        "--case direct_lookup`"
    )
    end = read_run_log(log).end
    assert end is not None and not end.finished and end.reason == "interrupted"


def test_dry_run_prints_the_plan_and_sends_nothing(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(ROOT / "cassettes", suite_dir / "cassettes")
    before = sorted(p.stat().st_mtime_ns for p in (suite_dir / "cassettes").rglob("*.json"))
    config = str(suite_dir / "fcreplay.toml")
    selection = ["--target", "sim-openai-chat", "--case", "direct_lookup", "--dry-run"]
    assert run(["record", "--config", config, *selection]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "record plan: 4 units, 12 attempts"
    assert out[1] == "  live: 4 units, 18 requests to providers"  # 2 turns × 3 in auto, reversed
    assert "cassettes replaced: 4, created: 0" in out[2]
    assert out[-1] == "nothing was sent or written (--dry-run)"
    assert not (suite_dir / "runs").exists()
    assert sorted(p.stat().st_mtime_ns for p in (suite_dir / "cassettes").rglob("*.json")) == before


def test_record_mode_once_says_how_many_requests_went_live(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(ROOT / "cassettes", suite_dir / "cassettes")
    (suite_dir / "cassettes" / "sim-openai-chat" / "auto" / "direct_lookup.json").unlink()
    with running_simulator(SCRIPT, port=0) as url:
        config = suite_dir / "fcreplay.toml"
        config.write_text(
            config.read_text(encoding="utf-8").replace("http://127.0.0.1:8765", url),
            encoding="utf-8",
        )
        selection = ["--target", "sim-openai-chat", "--case", "direct_lookup"]
        code = run(["record", "--config", str(config), *selection, "--record-mode", "once"])
    out = capsys.readouterr().out
    assert code == 0
    # auto's cassette was missing: its 3 attempts × 2 turns went live, the rest replayed.
    assert "  requests: 6 sent live, 12 answered from cassettes" in out
