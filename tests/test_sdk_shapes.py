"""Every request the built-in adapters build is one the official SDKs declare, and every
answer the simulator gives is one the SDKs accept in strict validation.

The example suite is recorded against the bundled simulator with each adapter in each
mode (streamed or not, strict or not), all variants and second turns included; then
each recorded request is checked against its SDK's request type (no undeclared key)
and each response against the SDK's response model (pydantic strict mode).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fcreplay.adapters.registry import api_for_url
from fcreplay.cassettes.store import Interaction, read_interactions
from fcreplay.cli import run
from fcreplay.simulator.server import base_urls, running_simulator

from .conftest import ROOT
from .sdk_types import request_undeclared, response_problems, undeclared

SDK_ADAPTERS = ("openai_chat", "openai_responses", "anthropic", "gemini")
MODES = [(stream, strict) for stream in (False, True) for strict in (False, True)]


def targets(urls: dict[str, str]) -> str:
    blocks = []
    for adapter in SDK_ADAPTERS:
        for stream, strict in MODES:
            mode = f"{'stream' if stream else 'body'}-{'strict' if strict else 'loose'}"
            blocks.append(
                "[[targets]]\n"
                f'name = "{adapter}-{mode}"\n'
                f'adapter = "{adapter}"\nmodel = "fcreplay-sim-hasty"\n'
                f'base_url = "{urls[adapter]}"\nstream = {str(stream).lower()}\n'
                f"strict = {str(strict).lower()}\n"
            )
    return "\n".join(blocks)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> list[Interaction]:
    suite = tmp_path_factory.mktemp("sdk-shapes")
    for folder in ("contracts", "cases"):
        (suite / folder).mkdir()
        for file in (ROOT / folder).iterdir():
            (suite / folder / file.name).write_bytes(file.read_bytes())
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = text[text.index("[tool.fcreplay]") : text.index("[[tool.fcreplay.targets]]")]
    table = table.replace("[tool.fcreplay]\n", "").replace("repetitions = 3", "repetitions = 1")
    with running_simulator(ROOT / "cases" / "delivery_simulator.json") as url:
        (suite / "fcreplay.toml").write_text(table + targets(base_urls(url)), encoding="utf-8")
        assert run(["record", "--config", str(suite / "fcreplay.toml"), "--concurrency", "4"]) == 0
    found = [
        interaction
        for path in sorted((suite / "cassettes").rglob("*.json"))
        for interaction in read_interactions(path)
        if isinstance(interaction, Interaction)
    ]
    return found


def by_api(interactions: list[Interaction], api: str) -> list[Interaction]:
    return [i for i in interactions if api_for_url(i.request.uri) == api]


@pytest.mark.parametrize("api", SDK_ADAPTERS)
def test_every_request_has_only_keys_the_sdk_declares(
    recorded: list[Interaction], api: str
) -> None:
    interactions = by_api(recorded, api)
    assert len(interactions) > 50
    problems = {
        f"{i.request.uri} {problem}"
        for i in interactions
        for problem in request_undeclared(api, i.request.body)
    }
    assert sorted(problems) == []


@pytest.mark.parametrize("api", SDK_ADAPTERS)
def test_every_simulator_answer_passes_the_sdk_in_strict_mode(
    recorded: list[Interaction], api: str
) -> None:
    problems = {
        f"{i.request.uri} {problem}"
        for i in by_api(recorded, api)
        if 200 <= i.response.status < 300
        for problem in response_problems(api, i.response.body, i.response.events)
    }
    assert sorted(problems)[:20] == []


def test_the_check_flags_what_the_sdk_does_not_declare() -> None:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    body: dict[str, Any] = {
        "model": "m",
        "max_tokens": 1,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "oops": 1}]}],
        "temperature": 0,
    }
    assert undeclared(body, MessageCreateParamsNonStreaming) == [
        "/messages/0/content/0/oops",
        "/temperature",
    ]
    assert request_undeclared("gemini", {"contents": [], "toolConfg": {}}) == ["/toolConfg"]


def test_second_turns_are_part_of_what_is_checked(recorded: list[Interaction]) -> None:
    # A request carrying tool results exists for every adapter.
    markers = {
        "openai_chat": '"role": "tool"',
        "openai_responses": "function_call_output",
        "anthropic": "tool_result",
        "gemini": "functionResponse",
    }
    for api, marker in markers.items():
        assert any(marker in json.dumps(i.request.body) for i in by_api(recorded, api)), api
