"""No credential in any file or terminal line, whichever command writes it.

A made-up key goes into a prompt, a tool result, a provider's answer and a base URL's
user-info; record, replay, check and report then run, and every file under the
suite and everything printed is searched for it.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fcreplay.cassettes.redaction import (
    KEY_PREFIXES,
    KEY_SHAPES,
    SecretGuard,
    leaks,
    may_hold_key,
    scrub_url,
)
from fcreplay.cli import run
from fcreplay.errors import SecretLeakError
from fcreplay.runlog import read_run_log
from fcreplay.simulator.server import running_simulator

from .conftest import ROOT

SCRIPT = ROOT / "cases" / "delivery_simulator.json"
ONE_UNIT = ["--target", "sim-openai-chat", "--variant", "auto", "--case", "direct_lookup"]


def fake(prefix: str, length: int, alphabet: str = "abcdefghijkmnpqrstuvwxyz0123456789") -> str:
    return prefix + "".join(secrets.choice(alphabet) for _ in range(length))


SAMPLES = {
    "Anthropic": fake("sk-ant-api03-", 40),
    "OpenAI": fake("sk-proj-", 40),
    "Google": fake("AIza", 35),
    "Groq": fake("gsk_", 48),
    "xAI": fake("xai-", 60),
    "AWS access key": fake("AKIA", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    "GitHub token": fake("ghp_", 36),
    "JWT": "Bearer eyJ" + fake("", 20) + ".eyJ" + fake("", 30) + "." + fake("", 40),
}


def test_every_key_shape_has_a_sample() -> None:
    assert set(SAMPLES) == set(KEY_SHAPES) == set(KEY_PREFIXES)


@pytest.mark.parametrize("shape", sorted(KEY_SHAPES))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_key_of_a_shape_begins_with_one_of_its_prefixes(shape: str, data: Any) -> None:
    # The guard only runs the pattern on text holding a prefix.
    key = data.draw(st.from_regex(KEY_SHAPES[shape], fullmatch=True))
    assert key.startswith(KEY_PREFIXES[shape])


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(
        st.sampled_from([p for ps in KEY_PREFIXES.values() for p in ps])
        | st.text(alphabet="skAIzagx_-aiKSyJhpousrtbeén€", max_size=8),
        max_size=6,
    ).map("".join)
)
def test_the_prefix_search_finds_exactly_the_texts_holding_a_prefix(text: str) -> None:
    # The search stands for the list: text it passes over is never key-checked.
    holds = any(p in text for ps in KEY_PREFIXES.values() for p in ps)
    assert may_hold_key(text) == holds


@pytest.mark.parametrize("prefix", [p for ps in KEY_PREFIXES.values() for p in ps])
def test_the_prefix_search_finds_each_prefix_and_none_of_its_near_misses(prefix: str) -> None:
    # Each prefix is found at either end of the text and beside JSON punctuation, and
    # not when one character short.
    for text in (prefix, f'"{prefix}"', f"x{prefix}x", f"é{prefix}", f"{prefix}€", f"😀{prefix}"):
        assert may_hold_key(text)
    for cut in range(len(prefix)):
        near = prefix[:cut] + prefix[cut + 1 :]
        holds = any(p in near for ps in KEY_PREFIXES.values() for p in ps)
        assert may_hold_key(f'"{near}"') == holds
        assert may_hold_key(f"{near}:{near}") == holds


@pytest.mark.parametrize("shape", sorted(SAMPLES))
def test_each_key_shape_is_refused_wherever_it_stands(shape: str) -> None:
    sample = SAMPLES[shape]
    assert leaks(f'{{"text": "echo {sample} end"}}', [])
    with pytest.raises(SecretLeakError) as caught:
        SecretGuard().check(f"...{sample}...", where="report r.csv")
    assert sample not in str(caught.value)  # the message masks what it found


def test_ordinary_text_is_not_taken_for_a_key() -> None:
    text = "ask-me task-force sk-short AKIAshort eyJ.eyJ.x ghp_short ORD-123456 xai-ok"
    assert leaks(text, []) == []


def test_a_value_of_a_secret_header_is_refused_once_seen() -> None:
    guard = SecretGuard()
    guard.add("opaque-gateway-token-123")
    with pytest.raises(SecretLeakError):
        guard.check("body says opaque-gateway-token-123", where="cassette c.json")


def test_url_user_info_and_key_parameters_are_stripped() -> None:
    assert (
        scrub_url("http://user:pa55word@host:8/v1/x?key=k&alt=sse") == "http://host:8/v1/x?alt=sse"
    )


def files_holding(folder: Path, secret: str) -> list[Path]:
    return [
        path
        for path in folder.rglob("*")
        if path.is_file() and secret.encode() in path.read_bytes()
    ]


@pytest.fixture
def recorded(suite_dir: Path) -> Path:
    """The suite with one unit recorded cleanly, pointed at a simulator that is gone."""
    with running_simulator(SCRIPT, port=0) as url:
        config = suite_dir / "fcreplay.toml"
        config.write_text(
            config.read_text(encoding="utf-8").replace("http://127.0.0.1:8765", url),
            encoding="utf-8",
        )
        assert run(["record", "--config", str(config), *ONE_UNIT]) == 0
    return config


def every_command(config: Path, capsys: Any) -> tuple[list[int], str]:
    codes = [
        run(["replay", "--config", str(config), *ONE_UNIT]),
        run(["check", "--config", str(config)]),
        run(["report", "--config", str(config), "--format", "csv", "--output", "r.csv"]),
        run(["report", "--config", str(config), "--format", "json"]),
    ]
    out = capsys.readouterr()
    return codes, out.out + out.err


def test_a_key_in_the_prompt_reaches_no_file_and_no_terminal(
    recorded: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = fake("sk-test-", 32)
    prompt = recorded.parent / "contracts" / "delivery_prompt.txt"
    prompt.write_text(prompt.read_text(encoding="utf-8") + f"\nКлюч: {key}\n", encoding="utf-8")
    monkeypatch.chdir(recorded.parent)
    codes, printed = every_command(recorded, capsys)
    assert codes[:2] == [1, 1]  # replay and check refuse their run logs
    assert key not in printed
    assert files_holding(recorded.parent, key) == [prompt]


def test_a_replay_in_worker_processes_refuses_the_line_that_holds_a_key(
    recorded: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Workers make the log lines and pass them through the guard; the parent writes.
    key = fake("sk-test-", 32)
    prompt = recorded.parent / "contracts" / "delivery_prompt.txt"
    prompt.write_text(prompt.read_text(encoding="utf-8") + f"\nКлюч: {key}\n", encoding="utf-8")
    monkeypatch.chdir(recorded.parent)
    selection = ["--target", "sim-openai-chat", "--variant", "auto", "--jobs", "2"]
    assert run(["replay", "--config", str(recorded), *selection]) == 1
    printed = capsys.readouterr()
    assert "would contain a key-shaped string" in printed.err
    assert key not in printed.out + printed.err
    assert files_holding(recorded.parent, key) == [prompt]
    (log,) = (recorded.parent / "runs").glob("*replay*.jsonl")
    end = read_run_log(log).end
    assert end is not None and not end.finished


def test_a_key_in_a_tool_result_reaches_no_file_and_no_terminal(
    recorded: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = fake("fake-", 32)  # not key-shaped: refused because it is the key in use
    monkeypatch.setenv("FCREPLAY_TEST_KEY", key)
    recorded.write_text(
        recorded.read_text(encoding="utf-8").replace(
            'name = "sim-gemini"', 'name = "sim-gemini"\napi_key_env = "FCREPLAY_TEST_KEY"'
        ),
        encoding="utf-8",
    )
    results = recorded.parent / "cases" / "delivery_results.json"
    document = json.loads(results.read_text(encoding="utf-8"))
    document["rules"][0]["result"]["note"] = key
    results.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    monkeypatch.chdir(recorded.parent)
    codes, printed = every_command(recorded, capsys)
    assert codes[0] == 1
    assert key not in printed
    assert files_holding(recorded.parent, key) == [results]


def test_a_key_in_the_answer_or_the_base_url_reaches_no_file(
    suite_dir: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = fake("sk-test-", 32)
    password = fake("pw-", 24)
    script = json.loads(SCRIPT.read_text(encoding="utf-8"))
    turns = script["cases"]["missing_id"]["profiles"]["fcreplay-sim-careful"]["turns"]
    turns[:] = [{"text": f"Вот ключ: {key}"}]
    config = suite_dir / "fcreplay.toml"
    monkeypatch.chdir(suite_dir)
    with running_simulator(script, port=0) as url:
        with_password = url.replace("http://", f"http://fcreplay:{password}@")
        config.write_text(
            config.read_text(encoding="utf-8").replace("http://127.0.0.1:8765", with_password),
            encoding="utf-8",
        )
        leaky = run(["record", "--config", str(config), *ONE_UNIT[:4], "--case", "missing_id"])
        clean = run(["record", "--config", str(config), *ONE_UNIT])
    codes, printed = every_command(config, capsys)
    assert (leaky, clean, codes[0]) == (1, 0, 0), printed
    assert key not in printed and password not in printed
    assert files_holding(suite_dir, key) == []
    assert files_holding(suite_dir, password) == [config]


def test_report_of_a_log_that_holds_a_key_writes_nothing(
    recorded: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = fake("sk-test-", 32)
    (log,) = (recorded.parent / "runs").glob("*.jsonl")
    lines = log.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-2])  # the line before the run-end record
    last["steps"][0]["decision"]["text"] = key
    last["verdict"] = "fail"
    last["findings"] = [{"code": "text_mismatch", "step": 0, "path": "", "actual": key}]
    lines[-2] = json.dumps(last, ensure_ascii=False)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(recorded.parent)
    refused = set()
    for fmt in ("text", "json", "csv", "markdown", "html"):
        to_file = run(["report", str(log), "--format", fmt, "--output", f"r.{fmt}"])
        to_terminal = run(["report", str(log), "--format", fmt])
        assert to_file == to_terminal
        if to_file == 1:
            refused.add(fmt)
    assert "csv" in refused  # the format that carries what each finding saw
    assert key not in "".join(capsys.readouterr())
    assert files_holding(recorded.parent, key) == [log]
