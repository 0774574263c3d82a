"""Bedrock Converse and Ollama native as extra targets of a copy of the example suite:
recorded against the simulator over loopback HTTP, replayed offline, passing `check`."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cassettes import eventstream
from fcreplay.cassettes.inspection import inspect_file
from fcreplay.cassettes.store import Interaction, read_interactions
from fcreplay.cli import run
from fcreplay.simulator.server import base_urls, running_simulator

from .conftest import ROOT

TARGETS = {
    "sim-bedrock": ("bedrock_converse", "fcreplay-sim-hasty", False),
    "sim-bedrock-stream": ("bedrock_converse", "fcreplay-sim-careful", True),
    "sim-ollama": ("ollama", "fcreplay-sim-careful", False),
    "sim-ollama-stream": ("ollama", "fcreplay-sim-hasty", True),
}


def extra_targets(urls: dict[str, str]) -> str:
    return "".join(
        f'\n[[targets]]\nname = "{name}"\nadapter = "{adapter}"\nmodel = "{model}"\n'
        f'base_url = "{urls[adapter]}"\nstream = {str(stream).lower()}\n'
        for name, (adapter, model, stream) in TARGETS.items()
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = tmp_path_factory.mktemp("native")
    # The example suite as it ships (its cassettes and goldens too), plus the new targets.
    for folder in ("contracts", "cases", "cassettes", "golden"):
        shutil.copytree(ROOT / folder, suite / folder)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = text[text.index("[tool.fcreplay]") :].replace("[tool.fcreplay]\n", "")
    table = table.replace("[[tool.fcreplay.targets]]", "[[targets]]")
    selection = [arg for name in TARGETS for arg in ("--target", name)]
    with running_simulator(ROOT / "cases" / "delivery_simulator.json") as url:
        (suite / "fcreplay.toml").write_text(table + extra_targets(base_urls(url)), "utf-8")
        config = str(suite / "fcreplay.toml")
        assert run(["record", "--config", config, "--concurrency", "4", *selection]) == 0
    for name in TARGETS:
        update = ["golden", "update", "--config", config, "--target", name]
        assert run([*update, "--reason", "first recording"]) == 0
    return suite


def test_every_unit_is_recorded_in_the_native_framings(recorded: Path) -> None:
    for name, (adapter, _, stream) in TARGETS.items():
        cassettes = sorted((recorded / "cassettes" / name).rglob("*.json"))
        assert len(cassettes) == 46, name
        interactions = [i for c in cassettes for i in read_interactions(c)]
        assert all(isinstance(i, Interaction) for i in interactions)
        streamed = [i for i in interactions if isinstance(i, Interaction) and i.response.events]
        assert bool(streamed) is stream
        if stream and adapter == "bedrock_converse":
            assert all(
                i.response.headers["content-type"] == eventstream.CONTENT_TYPE for i in streamed
            )
        record = inspect_file(str(cassettes[0]))[0]
        assert record["api"] == adapter and record["decision"] is not None


def test_replay_is_offline_and_check_passes(
    recorded: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    def refuse(self: socket.socket, address: Any) -> None:
        raise OSError("network disabled during replay")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    config = str(recorded / "fcreplay.toml")
    capsys.readouterr()
    assert run(["check", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "check passed" in out and " 0 drift" in out
    for name in TARGETS:
        assert f"{name}/auto" in out


def test_schema_diff_reads_what_the_native_targets_sent(recorded: Path, capsys: Any) -> None:
    config = str(recorded / "fcreplay.toml")
    assert run(["schema-diff", "--config", config, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["cassettes"], report["skipped"], report["blocking"]) == (8 * 46, [], 0)

    cassette = recorded / "cassettes" / "sim-bedrock" / "auto" / "direct_lookup.json"
    document = json.loads(cassette.read_text(encoding="utf-8"))
    for tools in document["shared"].values():  # the `toolConfig.tools` the requests sent, once
        for tool in tools:
            tool["toolSpec"]["inputSchema"]["json"].pop("required", None)
    cassette.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    assert run(["schema-diff", "--config", config, "--format", "json"]) == 1
    entries = json.loads(capsys.readouterr().out)["entries"]
    assert entries and {entry["target"] for entry in entries} == {"sim-bedrock"}
