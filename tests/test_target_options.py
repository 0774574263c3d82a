"""Per-target request options: config checks, settings over the suite's, and what is sent,
recorded and compared on replay (extra body, query, headers, the key header)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run
from fcreplay.engine import plan, transport
from fcreplay.engine.plan import plan_units, unit_settings
from fcreplay.engine.request_options import with_target_options
from fcreplay.errors import InputError
from fcreplay.inputs.config import Target, load_config
from fcreplay.inputs.suite import load_suite
from fcreplay.inputs.target_options import deep_merge
from fcreplay.neutral import WireRequest
from fcreplay.simulator.server import running_simulator

from .conftest import ROOT

SCRIPT = ROOT / "cases" / "delivery_simulator.json"
SELECTION = ["--target", "sim-openai-chat", "--case", "quote_complete", "--variant", "auto"]


@pytest.fixture
def simulator() -> Iterator[str]:
    with running_simulator(SCRIPT, port=0) as url:
        yield url


def configure(suite_dir: Path, url: str, target: str, lines: str) -> Path:
    config = suite_dir / "fcreplay.toml"
    text = config.read_text(encoding="utf-8").replace("http://127.0.0.1:8765", url)
    text = text.replace(f'name = "{target}"', f'name = "{target}"\n{lines}')
    config.write_text(text, encoding="utf-8")
    return config


def test_deep_merge_merges_tables_and_replaces_the_rest() -> None:
    base = {"a": {"b": 1, "c": [1]}, "d": 1}
    assert deep_merge(base, {"a": {"c": [2], "e": 3}, "d": {"x": 1}}) == {
        "a": {"b": 1, "c": [2], "e": 3},
        "d": {"x": 1},
    }
    assert base == {"a": {"b": 1, "c": [1]}, "d": 1}  # the built body is left as it was


def test_options_reach_the_request_body_path_and_headers(tmp_path: Path) -> None:
    target = load_target(
        'extra_body = {reasoning_effort = "low", stream_options = {include_obfuscation = false}}\n'
        'query = {"api-version" = "2024-10-21"}\n'
        'headers = {"X-Title" = "fcreplay tests", "x-portkey-api-key" = {env = "PK"}}\n',
        tmp_path,
    )
    request = WireRequest(
        "POST",
        "/chat/completions",
        {"content-type": "application/json"},
        {"model": "m", "stream_options": {"include_usage": True}},
    )
    sent = with_target_options(request, target)
    assert sent.path == "/chat/completions?api-version=2024-10-21"
    assert sent.body == {
        "model": "m",
        "stream_options": {"include_usage": True, "include_obfuscation": False},
        "reasoning_effort": "low",
    }
    # The secret header is the transport's to send; it never joins the recorded headers.
    assert sent.headers == {"content-type": "application/json", "x-title": "fcreplay tests"}


def load_target(lines: str, folder: Path) -> Target:
    text = (
        'contract = "c.json"\ncases = "c.jsonl"\n[[targets]]\nname = "t"\n'
        f'adapter = "openai_chat"\nmodel = "m"\n{lines}'
    )
    path = folder / "fcreplay.toml"
    path.write_text(text, encoding="utf-8")
    (target,) = load_config(path).targets
    return target


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('headers = {"api-key" = "abc123"}\n', "carries a credential"),
        ('headers = {"Authorization" = "Bearer x"}\n', "carries a credential"),
        ('headers = {"bad name" = "x"}\n', "not an HTTP header name"),
        ('headers = {"X-A" = {env = "not a name"}}\n', "env = "),
        ('query = {key = "AIza..."}\n', "carries a credential"),
        ('query = {"api-version" = 2024}\n', "table of parameter names to strings"),
        ("extra_body = {}\n", "non-empty table"),
        ("settings = {temprature = 0}\n", "unknown setting 'temprature'"),
        ("settings = {top_p = 2}\n", "top_p: must be a number from 0 to 1"),
        ("settings = {max_output_tokens = 0}\n", "at least 1"),
        ('api_key_header = "x y"\n', "HTTP header name"),
    ],
)
def test_bad_options_name_the_key_and_line(tmp_path: Path, lines: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_target(lines, tmp_path)
    (problem,) = caught.value.problems
    assert message in problem.message
    assert problem.line == 7
    assert problem.message.startswith("targets[0].")


def test_target_settings_override_the_suite_and_default_omits(suite_dir: Path) -> None:
    config = suite_dir / "fcreplay.toml"
    text = config.read_text(encoding="utf-8")
    text = text.replace(
        'name = "sim-openai-chat"',
        'name = "sim-openai-chat"\n'
        'settings = {temperature = "default", max_output_tokens = 2000, top_p = 0.5}',
    )
    text = text.replace(
        'name = "sim-gemini"', 'name = "sim-gemini"\nsettings = {parallel_tool_calls = true}'
    )
    config.write_text(text, encoding="utf-8")
    suite = load_suite(config)
    settings = {
        unit.target.name: unit_settings(suite, unit, 0)
        for unit in plan_units(suite, variants=["auto"], case_ids=["quote_complete"])
    }
    chat = settings["sim-openai-chat"]
    assert (chat.temperature, chat.top_p, chat.max_output_tokens) == (None, 0.5, 2000)
    assert chat.parallel_tool_calls is False  # the suite's, not overridden
    responses = settings["sim-openai-responses"]
    assert (responses.temperature, responses.max_output_tokens) == (0.0, 500)
    # Anthropic takes temperature only from a target's own settings (opt-in).
    assert settings["sim-anthropic"].temperature is None
    assert settings["sim-gemini"].parallel_tool_calls is True


def test_an_anthropic_target_can_opt_in_to_temperature(suite_dir: Path) -> None:
    config = suite_dir / "fcreplay.toml"
    text = config.read_text(encoding="utf-8").replace(
        'name = "sim-anthropic"', 'name = "sim-anthropic"\nsettings = {temperature = 0.2}'
    )
    config.write_text(text, encoding="utf-8")
    suite = load_suite(config)
    (unit,) = plan_units(
        suite, targets=["sim-anthropic"], variants=["auto"], case_ids=["quote_complete"]
    )
    assert unit_settings(suite, unit, 0).temperature == 0.2


def test_options_are_sent_recorded_and_part_of_drift(
    suite_dir: Path, simulator: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    secret = "pk-test-fcreplay-FAKE-SECRET-0123456789"
    config = configure(
        suite_dir,
        simulator,
        "sim-openai-chat",
        'extra_body = {reasoning_effort = "low"}\n'
        'query = {"api-version" = "2024-10-21"}\n'
        'headers = {"HTTP-Referer" = "https://example.org", "x-gateway-key" = {env = "GW_KEY"}}\n'
        'api_key_env = "FAKE_AZURE_KEY"\napi_key_header = "api-key"\napi_key_prefix = ""',
    )
    key = "azure-test-fcreplay-FAKE-KEY-0123456789"
    monkeypatch.setenv("FAKE_AZURE_KEY", key)
    monkeypatch.setenv("GW_KEY", secret)
    sent: list[tuple[str, dict[str, str]]] = []
    original = transport.HttpTransport.send

    def spy(self: transport.HttpTransport, request: WireRequest) -> Any:
        trip = original(self, request)
        sent.append((trip.url, {**request.headers, **self._auth}))
        return trip

    monkeypatch.setattr(transport.HttpTransport, "send", spy)
    assert run(["record", "--config", str(config), *SELECTION]) == 0
    assert sent
    for url, headers in sent:
        assert url.endswith("/v1/chat/completions?api-version=2024-10-21")
        assert headers["api-key"] == key and "authorization" not in headers
        assert headers["x-gateway-key"] == secret
        assert headers["http-referer"] == "https://example.org"

    cassette = suite_dir / "cassettes" / "sim-openai-chat" / "auto" / "quote_complete.json"
    text = cassette.read_text(encoding="utf-8")
    assert key not in text and secret not in text and "x-gateway-key" not in text
    (first, *_) = json.loads(text)["interactions"]
    assert first["request"]["uri"].endswith("?api-version=2024-10-21")
    assert first["request"]["parsed_body"]["reasoning_effort"] == "low"
    assert first["request"]["headers"]["http-referer"] == ["https://example.org"]

    monkeypatch.delenv("GW_KEY")  # replay needs no secret
    capsys.readouterr()
    assert run(["replay", "--config", str(config), *SELECTION]) == 0
    config.write_text(
        config.read_text(encoding="utf-8").replace('"low"', '"high"'), encoding="utf-8"
    )
    assert run(["replay", "--config", str(config), *SELECTION]) == 1
    said = capsys.readouterr().err
    assert '/reasoning_effort differs:\n        recorded: "low"\n        now:      "high"' in said


def test_a_secret_header_without_its_variable_stops_the_recording(
    suite_dir: Path, simulator: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    config = configure(
        suite_dir, simulator, "sim-openai-chat", 'headers = {"x-gateway-key" = {env = "NO_SUCH"}}'
    )
    monkeypatch.delenv("NO_SUCH", raising=False)
    assert run(["record", "--config", str(config), *SELECTION]) == 2
    assert "NO_SUCH" in capsys.readouterr().err


def test_settings_are_held_for_the_latest_units_only(
    suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A replay worker asks for every unit it runs, once per request: a memo of every
    # unit grew with the run.
    monkeypatch.setattr(plan, "_UNITS_HELD", 16)
    suite = load_suite(suite_dir / "fcreplay.toml")
    units = plan_units(suite)
    assert len(units) > 16
    first = [(unit_settings(suite, unit, 0), unit_settings(suite, unit, 1)) for unit in units]
    again = [(unit_settings(suite, unit, 0), unit_settings(suite, unit, 1)) for unit in units]
    assert again == first
    assert len(plan._SETTINGS[0][1]) <= 16
