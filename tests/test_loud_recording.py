"""Recording that fails says so: exit 1, the reasons with counts, no good cassette overwritten."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run
from fcreplay.runlog import read_run_log
from fcreplay.simulator.server import running_simulator

from .conftest import ROOT

SCRIPT = ROOT / "cases" / "delivery_simulator.json"
UNIT = ["--target", "sim-openai-chat", "--case", "direct_lookup"]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def example_copy(suite_dir: Path, url: str, **settings: Any) -> Path:
    """The example suite with its cassettes and goldens, pointed at `url`."""
    for folder in ("cassettes", "golden"):
        shutil.copytree(ROOT / folder, suite_dir / folder)
    config = suite_dir / "fcreplay.toml"
    text = config.read_text(encoding="utf-8").replace("http://127.0.0.1:8765", url)
    for key, value in settings.items():
        text = f"{key} = {json.dumps(value)}\n" + text
    config.write_text(text, encoding="utf-8")
    return config


def test_with_the_provider_down_record_fails_loudly_and_keeps_the_cassette(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = closed_port()
    config = example_copy(suite_dir, f"http://127.0.0.1:{port}")
    cassette = suite_dir / "cassettes" / "sim-openai-chat" / "auto" / "direct_lookup.json"
    before = cassette.read_bytes()
    golden = {p.name: p.read_bytes() for p in (suite_dir / "golden").iterdir()}

    code = run(["record", "--config", str(config), *UNIT])
    out, _ = capsys.readouterr()
    assert code == 1
    last = out.rstrip("\n").splitlines()[-1]
    assert last == (
        f"12 attempts failed: Connection refused at 127.0.0.1:{port} — is the provider or "
        "`fcreplay simulate` running?"
    )
    assert "--resume" in out
    assert cassette.read_bytes() == before
    assert not list((suite_dir / "cassettes").rglob("*.partial"))

    code = run(["golden", "update", "--config", str(config), "--reason", "try"])
    _, err = capsys.readouterr()
    assert code == 1
    assert "refused sim-openai-chat/auto/direct_lookup: attempt 1 got no answer" in err
    assert "nothing changed" in err
    assert {p.name: p.read_bytes() for p in (suite_dir / "golden").iterdir()} == golden


def test_a_case_the_simulator_lacks_fails_the_recording_with_its_reason(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = json.loads(SCRIPT.read_text(encoding="utf-8"))
    del script["cases"]["direct_lookup"]
    with running_simulator(script, port=0) as url:
        config = example_copy(suite_dir, url)
        code = run(["record", "--config", str(config), *UNIT, "--variant", "auto"])
    out, _ = capsys.readouterr()
    assert code == 1
    assert out.rstrip("\n").splitlines()[-1].startswith("3 attempts failed: ")
    cassette = suite_dir / "cassettes" / "sim-openai-chat" / "auto" / "direct_lookup.json"
    assert cassette.read_bytes() == (ROOT / cassette.relative_to(suite_dir)).read_bytes()


def test_a_cut_stream_is_a_transport_error_retried_like_one(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = json.loads(SCRIPT.read_text(encoding="utf-8"))
    selection = ["--target", "sim-openai-responses", "--case", "direct_lookup"]
    selection += ["--variant", "auto"]
    config = example_copy(suite_dir, "http://127.0.0.1:8765", max_retries=1)
    template = config.read_text(encoding="utf-8")
    # The first streamed answer is cut: its retry gets the whole stream.
    script["cases"]["direct_lookup"]["faults"] = [{"kind": "truncated_stream", "count": 1}]
    with running_simulator(script, port=0) as url:
        config.write_text(template.replace("http://127.0.0.1:8765", url), encoding="utf-8")
        assert run(["record", "--config", str(config), *selection]) == 0
    (log,) = (suite_dir / "runs").glob("*-record-*.jsonl")
    records = read_run_log(log).records
    assert [r.verdict for r in records] == ["pass"] * 3
    assert records[0].steps[0].retries == 1 and records[1].steps[0].retries == 0
    capsys.readouterr()
    # Every answer cut: the attempts err; none is judged an "invalid" decision.
    script["cases"]["direct_lookup"]["faults"] = [{"kind": "truncated_stream", "count": "all"}]
    with running_simulator(script, port=0) as url:
        config.write_text(template.replace("http://127.0.0.1:8765", url), encoding="utf-8")
        code = run(["record", "--config", str(config), *selection])
    out, _ = capsys.readouterr()
    assert code == 1
    assert out.splitlines()[-1] == ("3 attempts failed: the stream ended before its terminal event")
