"""`fcreplay proxy` as a process (port file, ready file, signals) and `check --cassette-dir`."""

from __future__ import annotations

import copy
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from fcreplay.cli import run
from fcreplay.simulator.server import running_simulator

from .conftest import CONTRACT
from .proxy_support import FAKE_KEY, MODEL, QUESTION, SCRIPT, contract_tools, written_text

DEADLINE = 30.0


def wait_for(condition: Any, what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@contextmanager
def proxy_process(folder: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`fcreplay proxy` in its own process; yields it and its URL once the ready file says so."""
    ready, port = folder / "ready", folder / "port"
    command = [sys.executable, "-m", "fcreplay", "proxy", "--cassette-dir", "cassettes"]
    command += ["--port-file", "port", "--ready-file", "ready", *args]
    process = subprocess.Popen(
        command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        wait_for(lambda: ready.exists() or process.poll() is not None, "the ready file")
        assert process.poll() is None, process.communicate()[0]
        url = ready.read_text(encoding="utf-8").strip()
        assert url == f"http://127.0.0.1:{port.read_text(encoding='utf-8').strip()}"
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def chat(url: str, cassette: str, *, tools: list[dict[str, Any]] | None = None) -> httpx.Response:
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": QUESTION}],
        "tools": tools if tools is not None else contract_tools(),
    }
    headers = {"authorization": f"Bearer {FAKE_KEY}", "x-fcreplay-cassette": cassette}
    return httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=30)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_process_announces_itself_and_stops_cleanly_on_a_signal(
    tmp_path: Path, stop: signal.Signals
) -> None:
    with (
        running_simulator(SCRIPT) as upstream,
        proxy_process(tmp_path, "--record-mode", "once", "--upstream", upstream) as (process, url),
    ):
        for number in range(5):
            assert chat(url, f"test_{number}").status_code == 200
        process.send_signal(stop)
        output, _ = process.communicate(timeout=DEADLINE)
    assert process.returncode == 0, output
    assert f"listening on {url}" in output
    assert f"stopped ({stop.name}): 5 recorded, 0 replayed, 0 miss, 0 error" in output
    assert not (tmp_path / "ready").exists()
    cassettes = sorted((tmp_path / "cassettes").glob("*.json"))
    assert [p.stem for p in cassettes] == [f"test_{n}" for n in range(5)]
    assert not list((tmp_path / "cassettes").glob(".*.tmp"))  # atomic writes left no debris
    assert FAKE_KEY not in written_text(tmp_path)


def test_check_passes_on_recorded_cassettes_and_fails_when_the_client_drops_required(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loose = copy.deepcopy(contract_tools())
    del loose[0]["function"]["parameters"]["required"]
    with (
        running_simulator(SCRIPT) as upstream,
        proxy_process(tmp_path, "--record-mode", "once", "--upstream", upstream) as (process, url),
    ):
        assert chat(url, "good").status_code == 200
        assert chat(url, "loose", tools=loose).status_code == 200
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=DEADLINE)
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder, name in ((good, "good"), (bad, "loose")):
        folder.mkdir()
        (tmp_path / "cassettes" / f"{name}.json").rename(folder / f"{name}.json")
    runs = str(tmp_path / "runs")
    args = ["check", "--contract", str(CONTRACT), "--runs", runs, "--cassette-dir"]
    assert run([*args, str(good)]) == 0
    out = capsys.readouterr().out
    assert "check passed: 1 model exchanges in 1 cassettes" in out
    assert run([*args, str(bad)]) == 1
    out = capsys.readouterr().out
    assert "schema semantic_change" in out and "/get_order/parameters/required" in out
    assert "check FAILED on 1 schema" in out
    # The proxy's run log feeds the golden workflow, without any suite configuration.
    (log,) = sorted(Path(runs).glob("*-proxy-*.jsonl"))
    golden = str(tmp_path / "golden")
    update = ["golden", "update", "--run", str(log), "--golden", golden, "--case", "good"]
    assert run([*update, "--reason", "first recording"]) == 0
    assert json.loads((tmp_path / "golden" / "proxy.json").read_text(encoding="utf-8"))
    assert run([*args, str(good), "--golden", golden]) == 0
    assert run(["schema-diff", "--cassettes", str(bad), "--contract", str(CONTRACT)]) == 1


def test_check_cassette_dir_needs_its_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", "--cassette-dir", "x"]) == 2
    assert "--cassette-dir and --contract go together" in capsys.readouterr().err
