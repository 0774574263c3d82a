"""vcrpy interoperability: vcrpy and pytest-recording replay fcreplay cassettes, and the plugin
judges cassettes vcrpy recorded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fcreplay.simulator.server import running_simulator

pytest.importorskip("anthropic")
pytest.importorskip("openai")
pytest.importorskip("pytest_recording")

SCRIPT: dict[str, Any] = {
    "note": "SYNTHETIC script for the vcrpy interoperability tests",
    "cases": {
        "two": {
            "user": "Where are ORD-123456 and ORD-654321?",
            "profiles": {
                "*": {
                    "turns": [
                        {
                            "calls": [
                                {"name": "get_order", "arguments": {"order_id": "ORD-123456"}},
                                {"name": "get_order", "arguments": {"order_id": "ORD-654321"}},
                            ]
                        },
                        {"text": "Both are on their way."},
                    ]
                }
            },
        }
    },
}
TOOL = {
    "name": "get_order",
    "description": "Read one order.",
    "effect": "read",
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
}

COMMON = """
import os
import anthropic, openai, pytest

BASE = os.environ["FCR_BASE"]
KEY = "not-a-real-key"
USER = [{"role": "user", "content": "Where are ORD-123456 and ORD-654321?"}]
SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}},
          "required": ["order_id"]}
TOOLS = [{"name": "get_order", "description": "Read one order.", "input_schema": SCHEMA}]
OPENAI_TOOLS = [{"type": "function", "function": {"name": "get_order",
                 "description": "Read one order.", "parameters": SCHEMA}}]


def loop(client):
    first = client.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=USER)
    results = [{"type": "tool_result", "tool_use_id": block.id, "content": "on its way"}
               for block in first.content if block.type == "tool_use"]
    history = USER + [{"role": "assistant", "content": first.content},
                      {"role": "user", "content": results}]
    return client.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=history)


def ask_openai(client):
    reply = client.chat.completions.create(model="m", messages=USER, tools=OPENAI_TOOLS)
    return [call.function.name for call in reply.choices[0].message.tool_calls]
"""

RECORD = (
    COMMON
    + """
import vcr


def test_record_with_vcrpy():
    with vcr.use_cassette("vcrpy/loop.yaml", record_mode="once"):
        loop(anthropic.Anthropic(base_url=BASE, api_key=KEY, max_retries=0))


def test_record_with_fcreplay(fcreplay):
    client = openai.OpenAI(base_url=BASE + "/v1", api_key=KEY,
                           http_client=fcreplay.httpx_client(), max_retries=0)
    assert ask_openai(client) == ["get_order", "get_order"]
"""
)

REPLAY = (
    COMMON
    + """
import pathlib
import vcr

OURS = str(pathlib.Path("cassettes/test_record/test_record_with_fcreplay.json").resolve())


def test_plain_vcrpy_replays_an_fcreplay_cassette():
    with vcr.use_cassette(OURS, serializer="fcreplay", record_mode="none"):
        client = openai.OpenAI(base_url=BASE + "/v1", api_key=KEY, max_retries=0)
        assert ask_openai(client) == ["get_order", "get_order"]


@pytest.fixture
def vcr_config():
    return {"serializer": "fcreplay", "record_mode": "none"}


@pytest.mark.vcr(OURS)
def test_pytest_recording_replays_an_fcreplay_cassette():
    client = openai.OpenAI(base_url=BASE + "/v1", api_key=KEY, max_retries=0)
    assert ask_openai(client) == ["get_order", "get_order"]


@pytest.mark.fcreplay(cassette="../vcrpy/loop.yaml", contract="contract.json")
def test_the_plugin_judges_a_vcrpy_cassette(fcreplay):
    reply = loop(anthropic.Anthropic(base_url=BASE, api_key=KEY,
                                     http_client=fcreplay.httpx_client(), max_retries=0))
    assert reply.content[0].text == "Both are on their way."
    assert [d.kind for d in fcreplay.decisions] == ["tool_call", "text"]
    fcreplay.assert_tools()
    fcreplay.assert_history(max_steps=2)
"""
)


def test_vcrpy_and_the_plugin_read_each_others_cassettes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    (pytester.path / "contract.json").write_text(json.dumps([TOOL]), encoding="utf-8")
    pytester.makepyfile(test_record=RECORD)
    with running_simulator(SCRIPT, port=0) as url:
        monkeypatch.setenv("FCR_BASE", url)
        # In subprocesses: vcrpy's YAML loader does not survive pytester's in-process
        # module snapshots (its C extension is imported once per process).
        pytester.runpytest_subprocess("--fcreplay-record-mode=once").assert_outcomes(passed=2)
    assert "sk-" not in (pytester.path / "vcrpy" / "loop.yaml").read_text(encoding="utf-8")
    (pytester.path / "test_record.py").unlink()
    tests = pytester.mkdir("tests")
    (tests / "test_replay.py").write_text(REPLAY, encoding="utf-8")
    result = pytester.runpytest_subprocess("--record-mode=none", "tests")
    result.assert_outcomes(passed=3)
