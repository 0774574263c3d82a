"""The pytest plugin, driven through pytester: record against the simulator, replay offline."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from fcreplay.runlog import read_run_log
from fcreplay.simulator.server import running_simulator

pytest.importorskip("openai")
pytest.importorskip("anthropic")

SCRIPT: dict[str, Any] = {
    "note": "SYNTHETIC script for the plugin tests",
    "cases": {
        "lookup": {
            "user": "Where is ORD-123456?",
            "profiles": {
                "*": {
                    "turns": [
                        {"calls": [{"name": "get_order", "arguments": {"order_id": "ORD-123456"}}]},
                        {"text": "It is in Samara."},
                    ]
                }
            },
        }
    },
}

TESTS = """
import asyncio, os
import anthropic, openai

BASE = os.environ["FCR_BASE"]
KEY = "not-a-real-key"
USER = [{"role": "user", "content": "Where is ORD-123456?"}]
SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}},
          "required": ["order_id"]}
OPENAI_TOOLS = [{"type": "function", "function": {"name": "get_order", "parameters": SCHEMA}}]
ANTHROPIC_TOOLS = [{"name": "get_order", "input_schema": SCHEMA}]


def test_openai(fcreplay):
    client = openai.OpenAI(base_url=BASE + "/v1", api_key=KEY,
                           http_client=fcreplay.httpx_client(), max_retries=0)
    reply = client.chat.completions.create(model="m", messages=USER, tools=OPENAI_TOOLS)
    assert reply.choices[0].message.tool_calls[0].function.name == "get_order"
    stream = client.chat.completions.create(model="m", messages=USER, tools=OPENAI_TOOLS,
                                            stream=True)
    names = [c.choices[0].delta.tool_calls[0].function.name for c in stream
             if c.choices and c.choices[0].delta.tool_calls
             and c.choices[0].delta.tool_calls[0].function.name]
    assert names == ["get_order"]

    async def both():
        aclient = openai.AsyncOpenAI(base_url=BASE + "/v1", api_key=KEY,
                                     http_client=fcreplay.async_httpx_client(), max_retries=0)
        return await aclient.chat.completions.create(model="m", messages=USER, tools=OPENAI_TOOLS)

    assert asyncio.run(both()).choices[0].message.tool_calls
    assert [d.kind for d in fcreplay.decisions] == ["tool_call"] * 3
    assert fcreplay.decisions[1].calls[0].arguments == {"order_id": "ORD-123456"}


def test_anthropic(fcreplay):
    client = anthropic.Anthropic(base_url=BASE, api_key=KEY,
                                 http_client=fcreplay.httpx_client(), max_retries=0)
    reply = client.messages.create(model="m", max_tokens=50, messages=USER, tools=ANTHROPIC_TOOLS)
    assert reply.stop_reason == "tool_use"
    with client.messages.stream(model="m", max_tokens=50, messages=USER,
                                tools=ANTHROPIC_TOOLS) as stream:
        final = stream.get_final_message()
    assert [block.name for block in final.content if block.type == "tool_use"] == ["get_order"]
    assert fcreplay.exchanges[1].stream
    fcreplay.assert_golden()
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_agent=TESTS)
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    return pytester


def refuse_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """From now on, refuse every outgoing connection and remember the attempts."""
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


def record(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    with running_simulator(SCRIPT, port=0) as url:
        monkeypatch.setenv("FCR_BASE", url)
        return project.runpytest("--fcreplay-record-mode=once", *args)


def test_record_once_then_replay_with_the_network_refused(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = record(project, monkeypatch, "--fcreplay-update")
    recorded.assert_outcomes(passed=2)
    cassettes = project.path / "cassettes" / "test_agent"
    assert sorted(p.name for p in cassettes.iterdir()) == [
        "test_anthropic.json",
        "test_openai.json",
    ]
    text = (cassettes / "test_openai.json").read_text(encoding="utf-8")
    assert "not-a-real-key" not in text and "authorization" not in text
    assert '"sse"' in text  # the stream is kept event by event
    assert (project.path / "golden" / "pytest" / "test_agent.json").is_file()
    before = {p: p.read_bytes() for p in cassettes.iterdir()}
    attempts = refuse_network(monkeypatch)

    # The simulator is gone; the base URL now points at nothing.
    replayed = project.runpytest()
    replayed.assert_outcomes(passed=2)
    assert attempts == []
    assert {p: p.read_bytes() for p in cassettes.iterdir()} == before
    replayed.stdout.fnmatch_lines(["fcreplay golden: 1 checked, 0 written, 0 unused"])
    log = sorted((project.path / "runs").glob("*.jsonl"))[-1]
    records = read_run_log(log).records
    assert [(r.case_id, r.variant, r.adapter) for r in records] == [
        ("test_anthropic", "exchange-0", "anthropic"),
        ("test_anthropic", "exchange-1", "anthropic"),
        ("test_openai", "exchange-0", "openai_chat"),
        ("test_openai", "exchange-1", "openai_chat"),
        ("test_openai", "exchange-2", "openai_chat"),
    ]
    assert {r.target for r in records} == {"pytest/test_agent"}
    assert records[0].test == "test_agent.py::test_anthropic"


def test_a_request_without_recording_fails_with_the_nearest_and_the_diff(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(project, monkeypatch, "-k", "openai").assert_outcomes(passed=1)
    attempts = refuse_network(monkeypatch)
    test = project.path / "test_agent.py"
    test.write_text(
        test.read_text(encoding="utf-8").replace("stream=True)", "stream=True, temperature=0.5)"),
        encoding="utf-8",
    )
    result = project.runpytest("-k", "openai")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "fcreplay: 1 request(s) had no recorded answer in *test_openai.json:",
            "no recorded answer for POST /v1/chat/completions; the nearest recording, "
            "interaction 1, differs at:",
            "  /temperature: recorded (missing), now 0.5",
        ]
    )
    assert "APIConnectionError" not in result.stdout.str()  # the SDK's traceback is noise
    assert attempts == []


def test_golden_changes_fail_until_updated(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = record(project, monkeypatch, "-k", "anthropic")
    new.assert_outcomes(failed=1)
    new.stdout.fnmatch_lines(["*exchange-0: new: no golden entry yet*", "*--fcreplay-update*"])
    project.runpytest("-k", "anthropic", "--fcreplay-update").assert_outcomes(passed=1)
    cassette = project.path / "cassettes" / "test_agent" / "test_anthropic.json"
    document = json.loads(cassette.read_text(encoding="utf-8"))
    block = document["interactions"][0]["response"]["parsed_body"]["content"][0]
    block["input"]["order_id"] = "ORD-654321"
    cassette.write_text(json.dumps(document), encoding="utf-8")
    changed = project.runpytest("-k", "anthropic")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        ['*exchange-0: changed: /calls/0/arguments/order_id: "ORD-123456" -> "ORD-654321"']
    )
    # A test that no longer asserts its golden entries leaves them unused.
    test = project.path / "test_agent.py"
    test.write_text(
        test.read_text(encoding="utf-8").replace("fcreplay.assert_golden()", "pass"),
        encoding="utf-8",
    )
    unused = project.runpytest("-k", "anthropic")
    unused.stdout.fnmatch_lines(
        ["fcreplay golden: 0 checked, 0 written, 1 unused (pytest/test_agent/test_anthropic)*"]
    )
    project.runpytest("-k", "anthropic", "--fcreplay-update")
    golden = json.loads((project.path / "golden/pytest/test_agent.json").read_text("utf-8"))
    assert golden["entries"] == {}


def test_a_session_that_does_not_use_the_plugin_writes_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    # __pycache__ is pytest's own (its rewritten test modules), written unless
    # PYTHONDONTWRITEBYTECODE is set.
    before = sorted(p.name for p in pytester.path.iterdir() if p.name != "__pycache__")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert sorted(p.name for p in pytester.path.iterdir() if p.name != "__pycache__") == before
    assert "fcreplay:" not in result.stdout.str() and "fcreplay golden" not in result.stdout.str()
    help_text = pytester.runpytest("--help").stdout.str()
    assert "--fcreplay-record-mode" in help_text and "--fcreplay-update" in help_text


LOADERS = """
import sys

# Imported with the plugin itself, before it can say anything.
FIRST = {"fcreplay", "fcreplay.version", "fcreplay.pytest_plugin"}


def test_loaders(fcreplay):
    kinds = {
        name: type(module.__loader__).__name__
        for name, module in sys.modules.items()
        if name.startswith("fcreplay.") and name not in FIRST
    }
    assert "fcreplay.traffic.player" in kinds
    assert "AssertionRewritingHook" not in kinds.values(), kinds
    assert type(sys.modules[__name__].__loader__).__name__ == "AssertionRewritingHook"
"""


def test_fcreplay_modules_are_imported_without_assertion_rewriting(
    pytester: pytest.Pytester,
) -> None:
    # pytest would rewrite every module of the plugin's distribution: an AST parse and a
    # compile per module and session whenever the result cannot be cached.
    pytester.makepyfile(test_loaders=LOADERS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
