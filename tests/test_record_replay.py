"""Record against the loopback simulator, replay offline: the issue's acceptance points."""

from __future__ import annotations

import copy
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run
from fcreplay.record import AttemptRecord
from fcreplay.runlog import read_run_log
from fcreplay.simulator.server import running_simulator

from .conftest import ROOT

SCRIPT = ROOT / "cases" / "delivery_simulator.json"


@pytest.fixture
def simulator() -> Iterator[str]:
    with running_simulator(SCRIPT, port=0) as url:
        yield url


def point_at(suite_dir: Path, url: str, **settings: Any) -> Path:
    config = suite_dir / "fcreplay.toml"
    text = config.read_text(encoding="utf-8").replace("http://127.0.0.1:8765", url)
    for key, value in settings.items():
        text = f"{key} = {json.dumps(value)}\n" + text
    config.write_text(text, encoding="utf-8")
    return config


def records(folder: Path, mode: str) -> dict[tuple[str, str, str, int], AttemptRecord]:
    (log,) = sorted(folder.glob(f"*-{mode}-*.jsonl"))
    return {r.key: r for r in read_run_log(log).records}


def outcome(record: AttemptRecord) -> Any:
    return ([step.decision for step in record.steps], record.findings, record.verdict)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Refuse every outgoing connection and remember the attempts."""
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


def test_record_then_replay_offline_gives_the_same_decisions(
    suite_dir: Path, simulator: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    config = point_at(suite_dir, simulator)
    assert run(["record", "--config", str(config), "--concurrency", "4"]) == 0
    recorded = records(suite_dir / "runs", "record")
    # 4 targets x (13 auto + 13 no_tools + 13 reversed + 7 single-call forced) x 3 repetitions
    assert len(recorded) == 4 * 46 * 3
    assert any(r.verdict == "fail" for r in recorded.values())  # the hasty profile
    cassettes = sorted((suite_dir / "cassettes").rglob("*.json"))
    assert len(cassettes) == 4 * 46

    refused: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        refused.append(address)
        raise OSError("network disabled during replay")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    assert run(["replay", "--config", str(config)]) == 0
    replayed = records(suite_dir / "runs", "replay")
    assert replayed.keys() == recorded.keys()
    assert {k: outcome(r) for k, r in replayed.items()} == {
        k: outcome(r) for k, r in recorded.items()
    }
    assert refused == []  # replay never even tried to open a socket


def test_cassettes_are_readable_json_with_labelled_interactions(
    suite_dir: Path, simulator: str
) -> None:
    config = point_at(suite_dir, simulator)
    assert (
        run(
            [
                "record",
                "--config",
                str(config),
                "--target",
                "sim-openai-responses",
                "--case",
                "direct_lookup",
                "--variant",
                "auto",
            ]
        )
        == 0
    )
    path = suite_dir / "cassettes" / "sim-openai-responses" / "auto" / "direct_lookup.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["fcreplay"]["case_id"] == "direct_lookup"
    labels = [(i["label"]["attempt"], i["label"]["step"]) for i in document["interactions"]]
    assert labels == [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)]
    first = document["interactions"][0]
    assert first["request"]["parsed_body"]["input"][0]["content"] == "Где заказ ORD-123456?"
    assert isinstance(first["response"]["sse"], list)  # a stream, event by event
    assert "Где заказ" in path.read_text(encoding="utf-8")  # not escaped, not encoded


def test_replay_after_an_adapter_change_shows_the_drift_path(
    suite_dir: Path, simulator: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    config = point_at(suite_dir, simulator)
    selection = ["--target", "sim-openai-chat", "--case", "quote_complete", "--variant", "auto"]
    assert run(["record", "--config", str(config), *selection]) == 0
    capsys.readouterr()

    from fcreplay.adapters import openai_chat

    original = openai_chat.build_request

    def lossy(*args: Any, **kwargs: Any) -> Any:
        request = original(*args, **kwargs)
        body = copy.deepcopy(request.body)  # a built body is read-only: it shares its tools
        for tool in body.get("tools", []):
            if tool["function"]["name"] == "quote_delivery":
                del tool["function"]["parameters"]["required"]
        return replace(request, body=body)

    monkeypatch.setattr(openai_chat, "build_request", lossy)
    assert run(["replay", "--config", str(config), *selection]) == 1
    err = capsys.readouterr().err
    assert "request drift" in err
    assert "quote_delivery.json" not in err  # the cassette is named after the case
    assert "quote_complete.json interaction 0" in err
    assert 'parameters of tool quote_delivery at /required: recorded ["origin"' in err
    assert 'recorded ["origin", "destination", "weight_kg", "service"], now (missing)' in err


def test_missing_cassette_names_it_and_the_record_command(
    suite_dir: Path, capsys: Any, no_network: list[Any]
) -> None:
    config = suite_dir / "fcreplay.toml"
    assert (
        run(
            [
                "replay",
                "--config",
                str(config),
                "--target",
                "sim-gemini",
                "--case",
                "missing_id",
                "--variant",
                "auto",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "no cassette" in err and "sim-gemini/auto/missing_id.json" in err
    assert "fcreplay record --target sim-gemini --variant auto --case missing_id" in err
    assert no_network == []


def test_a_fake_key_reaches_the_server_but_no_file(
    suite_dir: Path, simulator: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-test-fcreplay-FAKE-0123456789abcdef"
    config = point_at(suite_dir, simulator)
    text = config.read_text(encoding="utf-8").replace(
        'name = "sim-openai-chat"', 'name = "sim-openai-chat"\napi_key_env = "FCREPLAY_TEST_KEY"'
    )
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("FCREPLAY_TEST_KEY", key)
    seen: list[str] = []
    from fcreplay.engine import transport

    original = transport.HttpTransport.send

    def spy(self: Any, request: Any) -> Any:
        seen.append(str(self._auth))
        return original(self, request)

    monkeypatch.setattr(transport.HttpTransport, "send", spy)
    assert run(["record", "--config", str(config), "--target", "sim-openai-chat"]) == 0
    assert seen and all(key in auth for auth in seen)  # the key was really sent
    written = [p for p in suite_dir.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")]
    assert any("cassettes" in p.parts for p in written)
    for path in written:
        assert key not in path.read_text(encoding="utf-8"), path
        assert "Bearer" not in path.read_text(encoding="utf-8"), path


def test_a_cassette_holding_a_key_shaped_string_is_refused(
    suite_dir: Path, tmp_path: Path, capsys: Any
) -> None:
    script = json.loads(SCRIPT.read_text(encoding="utf-8"))
    leaky = "Ваш ключ sk-live-abcdefghijklmnopqrstuvwx, не теряйте"
    script["cases"]["missing_id"]["profiles"]["fcreplay-sim-careful"]["turns"] = [{"text": leaky}]
    with running_simulator(script, port=0) as url:
        config = point_at(suite_dir, url)
        code = run(
            [
                "record",
                "--config",
                str(config),
                "--target",
                "sim-openai-chat",
                "--case",
                "missing_id",
                "--variant",
                "auto",
            ]
        )
    assert code == 1
    assert "refused" in capsys.readouterr().err
    assert not (suite_dir / "cassettes" / "sim-openai-chat" / "auto" / "missing_id.json").exists()


def test_sigkill_mid_run_then_resume_logs_every_attempt_once(
    suite_dir: Path, tmp_path: Path
) -> None:
    # Two targets of the careful (deterministic) profile: an uninterrupted run must give
    # the same decisions, so the script may not vary between repetitions here.
    selection = ["--target", "sim-openai-chat", "--target", "sim-gemini", "--variant", "auto"]
    with running_simulator(SCRIPT, port=0, latency=0.02) as url:
        config = point_at(suite_dir, url)
        command = [sys.executable, "-m", "fcreplay", "record", "--config", str(config), *selection]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        runs = suite_dir / "runs"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            logs = list(runs.glob("*.jsonl")) if runs.exists() else []
            if logs and len(logs[0].read_bytes().splitlines()) >= 11:  # the header and ten records
                break
            time.sleep(0.005)  # waiting for progress, not for a duration
        process.send_signal(signal.SIGKILL)
        process.wait()
        (log,) = runs.glob("*.jsonl")
        run_id = log.stem
        partial = read_run_log(log)
        assert 10 <= len(partial.records) < 78
        resumed = subprocess.run(
            [*command, "--resume", run_id], capture_output=True, text=True, check=False
        )
        assert resumed.returncode == 0, resumed.stderr
        assert f"{len(partial.records)} attempts were already logged" in resumed.stdout

    fresh = tmp_path / "fresh"
    shutil.copytree(suite_dir / "contracts", fresh / "contracts")
    shutil.copytree(suite_dir / "cases", fresh / "cases")
    with running_simulator(SCRIPT, port=0) as new_url:
        # The same suite against a new simulator, whose repetition counters start afresh.
        text = config.read_text(encoding="utf-8").replace(url, new_url)
        (fresh / "fcreplay.toml").write_text(text, encoding="utf-8")
        assert run(["record", "--config", str(fresh / "fcreplay.toml"), *selection]) == 0

    final = read_run_log(log).records
    keys = [r.key for r in final]
    assert len(keys) == len(set(keys)) == 2 * 13 * 3  # every attempt exactly once
    assert keys == sorted(keys, key=list(uninterrupted_order(fresh)).index)
    uninterrupted = records(fresh / "runs", "record")
    assert {r.key: without_ids(r) for r in final} == {
        k: without_ids(r) for k, r in uninterrupted.items()
    }
    # The cassettes of the resumed run replay cleanly.
    assert run(["replay", "--config", str(config), *selection]) == 0


def uninterrupted_order(folder: Path) -> list[tuple[str, str, str, int]]:
    return list(records(folder / "runs", "record"))


def without_ids(record: AttemptRecord) -> Any:
    """A record's outcome without provider-generated call ids (they name repetitions)."""
    decisions = [
        replace(step.decision, calls=tuple(replace(c, call_id=None) for c in step.decision.calls))
        for step in record.steps
    ]
    return decisions, record.findings, record.verdict, record.signature


def test_replay_in_worker_processes_equals_replay_in_one(suite_dir: Path) -> None:
    from fcreplay.engine.runner import ReplayOptions, replay
    from fcreplay.inputs.suite import load_suite

    suite = load_suite(suite_dir / "fcreplay.toml")
    cassettes = ROOT / "cassettes"
    one = replay(suite, ReplayOptions(cassettes_dir=cassettes, processes=1))
    two = replay(suite, ReplayOptions(cassettes_dir=cassettes, processes=2))
    assert len(one.records) == len(two.records) == 552
    assert [outcome(r) for r in one.records] == [outcome(r) for r in two.records]
    logged = [r.key for r in read_run_log(two.log_path).records]
    assert logged == [r.key for r in one.records]  # complete and in plan order


@pytest.mark.parametrize("processes", [1, 2])
def test_schema_diff_fed_by_the_replay_equals_the_standalone_one(
    suite_dir: Path, processes: int
) -> None:
    from fcreplay.engine.runner import ReplayOptions, replay
    from fcreplay.inputs.suite import load_suite
    from fcreplay.schemadiff.differ import SchemaDiffer, schema_diff

    suite = load_suite(suite_dir / "fcreplay.toml")
    cassettes = ROOT / "cassettes"
    differ = SchemaDiffer(suite)
    replay(suite, ReplayOptions(cassettes_dir=cassettes, processes=processes, observer=differ))
    fed, alone = differ.result(), schema_diff(suite, cassettes=cassettes)
    assert fed.requests == alone.requests == 844
    assert fed.to_json() == alone.to_json()


def test_recording_again_from_a_simulator_that_kept_running_changes_no_byte(
    suite_dir: Path, simulator: str
) -> None:
    """Answers and call ids follow the attempt, not how many requests the simulator saw."""
    config = point_at(suite_dir, simulator)
    selection = ["--target", "sim-openai-chat", "--target", "sim-anthropic"]
    selection += ["--case", "lookup_not_found", "--case", "cancel_explicit"]
    assert run(["record", "--config", str(config), *selection]) == 0
    first = {p: p.read_bytes() for p in (suite_dir / "cassettes").rglob("*.json")}
    assert len(first) == 2 * 2 * 4  # 2 targets × 2 cases × 4 variants
    assert run(["record", "--config", str(config), *selection, "--concurrency", "4"]) == 0
    again = {p: p.read_bytes() for p in (suite_dir / "cassettes").rglob("*.json")}
    assert again == first
    ids = {
        call["id"]
        for path in first
        for interaction in json.loads(first[path])["interactions"]
        for call in interaction["response"]
        .get("parsed_body", {})
        .get("choices", [{}])[0]
        .get("message", {})
        .get("tool_calls", None)
        or []
    }
    assert ids and all(re.fullmatch(r"fcsim_r[0-2]_t\d_\d", i) for i in ids), ids
