"""Provider quirks seen in real traffic, each with a streamed and a non-streamed fixture.

The fixtures under fixtures/quirks/ are synthetic, written from the shape each quirk
was described with (none is copied from a recording): every one names its adapter,
its quirk class and the decision it must parse to.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from fcreplay.adapters import openai_responses
from fcreplay.adapters.registry import get_adapter
from fcreplay.decision import Decision
from fcreplay.neutral import Message, RequestSettings, StreamEvent, ToolResult, WireItem

from ..sdk_types import request_undeclared

FIXTURES = Path(__file__).parent / "fixtures" / "quirks"
NAMES = sorted(path.stem for path in FIXTURES.glob("*.json"))


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def parse(fixture: dict[str, Any]) -> Any:
    adapter = get_adapter(fixture["adapter"])
    if "events" in fixture:
        events = [StreamEvent(item["event"], item["data"]) for item in fixture["events"]]
        return adapter.parse_stream(fixture["status"], events)
    return adapter.parse_decision(fixture["status"], fixture["body"])


@pytest.mark.parametrize("name", NAMES)
def test_the_quirk_parses_to_the_decision_the_client_must_act_on(name: str) -> None:
    fixture = load(name)
    decision = parse(fixture)
    assert isinstance(decision, Decision), decision
    assert decision == Decision.from_json(fixture["expect"])


def test_every_quirk_class_has_a_streamed_and_a_non_streamed_fixture() -> None:
    forms: dict[str, set[str]] = defaultdict(set)
    for name in NAMES:
        fixture = load(name)
        forms[fixture["quirk"]].add("stream" if "events" in fixture else "body")
    assert len(forms) == 6
    assert {quirk: sorted(found) for quirk, found in forms.items()} == {
        quirk: ["body", "stream"] for quirk in forms
    }


@pytest.mark.parametrize(
    ("name", "output"),
    [
        ("openai_responses_custom_tool_call", "custom_tool_call_output"),
        ("openai_responses_client_tool_search", "tool_search_output"),
    ],
)
def test_responses_calls_get_the_answer_their_item_type_needs(name: str, output: str) -> None:
    decision = parse(load(name))
    (call,) = decision.calls
    content = {"tools": [{"type": "function", "name": "get_order", "parameters": {}}]}
    history = openai_responses.append_tool_result(
        [Message("user", "?")], decision, [ToolResult(call.call_id, call.name, content)]
    )
    answer = history[-1]
    assert isinstance(answer, WireItem)
    assert answer.payload["type"] == output
    assert answer.payload["call_id"] == call.call_id
    request = openai_responses.build_request("gpt-5", history, [], RequestSettings())
    assert openai_responses.read_request(request.body).tool_result_turns == 1
    assert request_undeclared("openai_responses", request.body) == []
