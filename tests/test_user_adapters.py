"""The open adapter seam: a user's adapter named by import path, registered, or installed.

The adapters come from tests/user_adapters (outside the package). A target naming one
records against the simulator, replays offline, passes check and lint, and its run
records and cassettes carry the adapter's own NAME and VERSION.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fcreplay.adapters import openai_chat, registry
from fcreplay.adapters.registry import (
    UnknownAdapterError,
    api_for_url,
    get_adapter,
    register_adapter,
)
from fcreplay.cli import run
from fcreplay.neutral import Message, RequestSettings, WireRequest
from fcreplay.record import AttemptRecord
from fcreplay.runlog import read_run_log
from fcreplay.simulator.server import base_urls, running_simulator

from .conftest import ROOT
from .user_adapters import renamed

SCRIPT = ROOT / "cases" / "delivery_simulator.json"
USER = "tests.user_adapters.renamed:Adapter"


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from the built-in adapters only, and leaves nothing behind."""
    monkeypatch.setattr(registry, "_registered", {})
    monkeypatch.setattr(registry, "_by_path", {})


@pytest.fixture
def simulator() -> Iterator[str]:
    with running_simulator(SCRIPT, port=0) as url:
        yield url


def with_targets(suite_dir: Path, *targets: tuple[str, str], url: str = "") -> Path:
    """The example suite's configuration with only these (name, adapter) targets."""
    config = suite_dir / "fcreplay.toml"
    text = config.read_text(encoding="utf-8")
    text = text[: text.index("[[targets]]")]
    for name, adapter in targets:
        text += (
            f'[[targets]]\nname = "{name}"\nadapter = "{adapter}"\n'
            f'model = "fcreplay-sim-careful"\nbase_url = "{url or "http://127.0.0.1:9"}/v1"\n\n'
        )
    config.write_text(text, encoding="utf-8")
    return config


def run_log(folder: Path, mode: str) -> tuple[AttemptRecord, ...]:
    (log,) = sorted(folder.glob(f"*-{mode}-*.jsonl"))
    return read_run_log(log).records


def line_of(config: Path, text: str) -> int:
    lines = config.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


# --- a target naming an adapter by import path -----------------------------------------


def test_a_user_adapter_records_replays_and_passes_check(
    suite_dir: Path, simulator: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = str(with_targets(suite_dir, ("sim-user", USER), url=simulator))
    assert run(["record", "--config", config, "--concurrency", "4"]) == 0
    recorded = run_log(suite_dir / "runs", "record")
    assert len(recorded) == 46 * 3
    assert {(r.adapter, r.adapter_version) for r in recorded} == {("renamed_chat", "7-user")}
    cassette = suite_dir / "cassettes" / "sim-user" / "auto" / "direct_lookup.json"
    assert json.loads(cassette.read_text(encoding="utf-8"))["fcreplay"]["adapter"] == "renamed_chat"

    assert run(["replay", "--config", config]) == 0
    replayed = run_log(suite_dir / "runs", "replay")
    assert {(r.adapter, r.adapter_version) for r in replayed} == {("renamed_chat", "7-user")}
    assert sorted(repr(r.steps) for r in replayed) == sorted(repr(r.steps) for r in recorded)
    run_id = replayed[0].run_id
    capsys.readouterr()

    assert run(["check", "--config", config]) == 1  # no golden yet: every entry is new
    assert "new" in capsys.readouterr().out
    assert run(["golden", "update", "--config", config, "--run", run_id, "--reason", "user"]) == 0
    assert run(["check", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "check passed" in out and "0 blocking schema differences" in out

    assert run(["schema-diff", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "every sent tool declaration matches the contract" in out and "skipped" not in out

    assert run(["lint", "--config", config]) == 0
    out = capsys.readouterr().out
    assert f"provider  sim-user ({USER}, not strict): 0 errors, 0 warnings, 1 note" in out
    assert "rule: OpenAI function calling: strict defaults to false" in out


def test_an_adapter_without_read_back_is_skipped_by_schema_diff_and_named(
    suite_dir: Path, simulator: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client_only = "tests.user_adapters.renamed:CLIENT_ONLY"
    config = str(with_targets(suite_dir, ("sim-client", client_only), url=simulator))
    selection = ["--case", "direct_lookup", "--variant", "auto"]
    assert run(["record", "--config", config, *selection]) == 0
    assert {r.adapter for r in run_log(suite_dir / "runs", "record")} == {"client_only"}
    assert run(["replay", "--config", config, *selection]) == 0
    capsys.readouterr()

    assert run(["schema-diff", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "direct_lookup.json: the client_only adapter cannot read its requests back" in out

    assert run(["lint", "--config", config]) == 0
    out = capsys.readouterr().out
    assert f"provider  sim-client ({client_only}, not strict): 0 errors, 0 warnings, 1 note" in out
    assert "the client_only adapter cannot read its requests back" in out


@pytest.mark.parametrize(
    ("adapter", "message"),
    [
        ("nope.missing:Thing", "cannot import 'nope.missing:Thing': ModuleNotFoundError"),
        ("tests.user_adapters.renamed:Missing", "AttributeError"),
        (
            "tests.user_adapters.renamed:NOT_AN_ADAPTER",
            "is not an adapter: it lacks NAME, VERSION, DEFAULT_BASE_URL",
        ),
        ("tests.user_adapters.renamed:", 'an import path reads "package.module:attribute"'),
        ("openai", "must be one of openai_chat, openai_responses, anthropic, gemini"),
        ("openai_chta", "did you mean 'openai_chat'?"),
    ],
)
def test_an_unusable_adapter_exits_2_naming_the_file_and_line(
    suite_dir: Path, capsys: pytest.CaptureFixture[str], adapter: str, message: str
) -> None:
    config = with_targets(suite_dir, ("sim-chat", "openai_chat"), ("sim-bad", adapter))
    assert run(["lint", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    line = line_of(config, f'adapter = "{adapter}"')
    assert f"{config}:{line}: targets[1].adapter: " in err
    assert message in err


# --- register_adapter ------------------------------------------------------------------


def test_a_registered_adapter_is_found_by_name_and_by_its_urls() -> None:
    own = dataclasses.replace(renamed.Adapter.CAPABILITIES, url_markers=("/v9/summon",))
    adapter = type("Own", (renamed.Renamed,), {"CAPABILITIES": own})()
    register_adapter("own", adapter)
    assert get_adapter("own") is adapter
    assert api_for_url("http://h/api/v9/summon?x=1") == "own"
    assert api_for_url("http://h/v1/chat/completions") == "openai_chat"  # built-ins first


def test_register_adapter_refuses_taken_names_and_non_adapters() -> None:
    register_adapter("mine", renamed.Adapter)
    with pytest.raises(ValueError, match="already taken"):
        register_adapter("mine", renamed.CLIENT_ONLY)
    with pytest.raises(ValueError, match="already taken"):
        register_adapter("gemini", renamed.Adapter)
    with pytest.raises(ValueError, match="without ':'"):
        register_adapter("pkg.mod:Thing", renamed.Adapter)
    with pytest.raises(TypeError, match="it lacks NAME, VERSION"):
        register_adapter("nothing", renamed.NOT_AN_ADAPTER)
    assert get_adapter("mine") is renamed.Adapter


def test_a_registered_class_is_instantiated() -> None:
    register_adapter("by_class", renamed.Renamed)
    adapter = get_adapter("by_class")
    assert isinstance(adapter, renamed.Renamed) and adapter.NAME == "renamed_chat"


def test_an_import_path_resolves_once_and_stays_private() -> None:
    adapter = get_adapter(USER)
    assert adapter is renamed.Adapter and get_adapter(USER) is adapter
    assert USER not in [name for name, _ in registry.adapters()]


def test_an_import_path_may_name_a_module_or_a_class() -> None:
    assert get_adapter("tests.user_adapters.renamed:openai_chat") is openai_chat
    adapter = get_adapter("tests.user_adapters.renamed:Renamed")
    assert isinstance(adapter, renamed.Renamed) and adapter is not renamed.Adapter


# --- entry points ----------------------------------------------------------------------


def fake_entry_points(monkeypatch: pytest.MonkeyPatch, *points: tuple[str, str]) -> list[str]:
    """Installed `fcreplay.adapters` entry points (name, value); returns the lookups made."""
    lookups: list[str] = []

    def entry_points(*, group: str) -> importlib.metadata.EntryPoints:
        lookups.append(group)
        return importlib.metadata.EntryPoints(
            importlib.metadata.EntryPoint(name, value, group) for name, value in points
        )

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    return lookups


def test_an_entry_point_adapter_loads_on_first_use_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lookups = fake_entry_points(monkeypatch, ("plugin", USER))
    assert get_adapter("openai_chat") is openai_chat
    assert lookups == []  # a built-in name never looks at the installed packages
    assert get_adapter("plugin") is renamed.Adapter
    assert get_adapter("plugin") is renamed.Adapter
    assert lookups == ["fcreplay.adapters"]
    assert "plugin" in [name for name, _ in registry.adapters()]


def test_an_unknown_name_lists_and_suggests_installed_entry_points(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_entry_points(monkeypatch, ("plugin", USER), ("broken", "nope.missing:Thing"))
    with pytest.raises(UnknownAdapterError) as caught:
        get_adapter("plugn")
    assert "anthropic, gemini, bedrock_converse, ollama, broken, plugin" in str(caught.value)
    assert "did you mean 'plugin'?" in str(caught.value)
    with pytest.raises(UnknownAdapterError) as caught:
        get_adapter("broken")
    assert "cannot load the fcreplay.adapters entry point 'broken' (nope.missing:Thing)" in str(
        caught.value
    )


def test_an_entry_point_adapter_works_as_a_target(
    suite_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_entry_points(monkeypatch, ("plugin", USER))
    config = with_targets(suite_dir, ("sim-plugin", "plugin"))
    assert run(["lint", "--config", str(config)]) == 0
    assert "provider  sim-plugin (plugin, not strict): 0 errors" in capsys.readouterr().out


# --- the simulator serves the registry -------------------------------------------------


class OwnPath(renamed.Renamed):
    """openai_chat's format at a path of its own, with the server part too."""

    NAME = "own_path"
    CAPABILITIES = dataclasses.replace(openai_chat.CAPABILITIES, url_markers=("/own/chat",))

    def build_request(self, *args: Any) -> WireRequest:
        return dataclasses.replace(super().build_request(*args), path="/own/chat")

    render_response = staticmethod(openai_chat.render_response)
    render_error = staticmethod(openai_chat.render_error)


def test_the_simulator_serves_a_registered_adapter_and_refuses_a_client_only_one() -> None:
    register_adapter("own_path", OwnPath)
    client_only = type(
        "Unserved",
        (renamed.ClientOnly,),
        {"CAPABILITIES": dataclasses.replace(openai_chat.CAPABILITIES, url_markers=("/unserved",))},
    )
    register_adapter("unserved", client_only)
    adapter = get_adapter("own_path")
    request = adapter.build_request(
        "fcreplay-sim-careful", [Message("user", "Где заказ ORD-123456?")], [], RequestSettings()
    )
    with running_simulator(SCRIPT) as url:
        urls = base_urls(url)
        assert "own_path" in urls and "unserved" not in urls
        answered = httpx.post(urls["own_path"] + request.path, json=request.body)
        refused = httpx.post(url + "/v1/unserved", json=request.body)
    assert answered.status_code == 200
    decision = adapter.parse_decision(answered.status_code, answered.json())
    assert decision.kind == "text"  # no tools declared, so the scripted text answer
    assert refused.status_code == 404
    assert "the unserved adapter cannot be served" in refused.text
