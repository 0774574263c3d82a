"""Tests of the OpenAI Responses API adapter.

The JSON fixtures under fixtures/openai_responses/ are synthetic: hand-written
bodies and event streams modelled on the reference document's Responses
examples and on the shape of public recorded cassettes (each file says so in
its `_comment`). Their ids, encrypted contents and usage numbers are made up.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fcreplay.adapters import openai_responses as adapter
from fcreplay.adapters._openai_responses_stream import HANDLERS
from fcreplay.adapters._wire import decode_arguments, encode_arguments
from fcreplay.adapters.registry import get_adapter
from fcreplay.cassettes.sse import format_sse, parse_sse
from fcreplay.decision import Decision, ProviderError, ToolCall
from fcreplay.inputs.contract import Contract, ToolSpec
from fcreplay.neutral import (
    HistoryItem,
    Message,
    RequestSettings,
    StreamEvent,
    ToolChoice,
    ToolResult,
    WireItem,
)

from .arrived import arrived

FIXTURES = Path(__file__).parent / "fixtures" / "openai_responses"
DECISION_FIXTURES = (
    "text",
    "one_call",
    "parallel_calls",
    "invalid_json_args",
    "refusal",
    "truncated_call",
    "content_filter",
    "hosted_tool",
)
STREAM_FIXTURES = ("stream_text", "stream_one_call", "stream_parallel", "stream_truncated_call")


def load(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def events_of(raw: list[dict[str, Any]]) -> list[StreamEvent]:
    return [StreamEvent(event["event"], event["data"]) for event in raw]


def over_the_wire(events: tuple[StreamEvent, ...] | None) -> list[StreamEvent]:
    """Events as a client decodes them after the simulator wrote them as SSE text."""
    assert events is not None
    return parse_sse(format_sse(events))


def decided(result: Decision | ProviderError) -> Decision:
    assert isinstance(result, Decision), result
    return result


def failed(result: Decision | ProviderError) -> ProviderError:
    assert isinstance(result, ProviderError), result
    return result


def tools_of(contract: Contract) -> list[ToolSpec]:
    return list(contract.tools)


def as_sent(spec: ToolSpec) -> ToolSpec:
    """The contract tool as sent_tools can give it back: the wire does not carry `effect`."""
    return ToolSpec(spec.name, spec.description, spec.parameters, "read")


# ---------------------------------------------------------------------------
# Module shape


def test_registry_returns_this_module() -> None:
    module = get_adapter("openai_responses")
    assert module is adapter
    assert adapter.NAME == "openai_responses"
    assert adapter.DEFAULT_BASE_URL == "https://api.openai.com/v1"
    assert (adapter.API_KEY_HEADER, adapter.API_KEY_PREFIX) == ("authorization", "Bearer ")
    assert adapter.VERSION


# ---------------------------------------------------------------------------
# parse_decision on fixtures


@pytest.mark.parametrize("name", DECISION_FIXTURES)
def test_fixture_decision(name: str) -> None:
    fixture = load(name)
    decision = decided(adapter.parse_decision(fixture["status"], fixture["body"]))
    assert decision.to_json() == fixture["expect"]
    assert decision.assistant_turn == fixture["body"]["output"]
    assert decision.raw_response is fixture["body"]
    assert decision.model == fixture["body"]["model"]


def test_call_id_is_call_id_not_item_id() -> None:
    body = load("one_call")["body"]
    decision = decided(adapter.parse_decision(200, body))
    assert decision.calls[0].call_id == body["output"][1]["call_id"]
    assert decision.calls[0].call_id != body["output"][1]["id"]


def test_hosted_tool_items_are_kept_but_never_calls() -> None:
    body = load("hosted_tool")["body"]
    decision = decided(adapter.parse_decision(200, body))
    assert decision.calls == ()
    assert [item["type"] for item in decision.assistant_turn] == ["web_search_call", "message"]


def test_text_beside_calls_is_kept() -> None:
    body = copy.deepcopy(load("one_call")["body"])
    body["output"].insert(
        1,
        {
            "id": "msg_1",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Проверяю заказ.", "annotations": []}],
        },
    )
    decision = decided(adapter.parse_decision(200, body))
    assert (decision.kind, decision.text, decision.stop) == (
        "tool_call",
        "Проверяю заказ.",
        "tool_call",
    )


def test_completed_call_item_marked_incomplete_is_invalid() -> None:
    body = copy.deepcopy(load("one_call")["body"])
    body["output"][1]["status"] = "incomplete"
    decision = decided(adapter.parse_decision(200, body))
    assert decision.kind == "invalid"
    assert decision.calls[0].arguments == {"order_id": "ORD-482913"}


def test_partial_text_cut_by_safety_stays_text() -> None:
    body = copy.deepcopy(load("text")["body"])
    body["status"] = "incomplete"
    body["incomplete_details"] = {"reason": "content_filter"}
    decision = decided(adapter.parse_decision(200, body))
    assert (decision.kind, decision.stop) == ("text", "content_filter")
    assert decision.finish_reason == "incomplete:content_filter"


def test_text_cut_by_length() -> None:
    body = copy.deepcopy(load("text")["body"])
    body["status"] = "incomplete"
    body["incomplete_details"] = {"reason": "max_output_tokens"}
    decision = decided(adapter.parse_decision(200, body))
    assert (decision.kind, decision.stop) == ("text", "length")


@pytest.mark.parametrize(
    ("status", "details", "finish", "stop"),
    [
        ("completed", None, "completed", "end"),
        ("incomplete", {"reason": "max_output_tokens"}, "incomplete:max_output_tokens", "length"),
        ("incomplete", {"reason": "content_filter"}, "incomplete:content_filter", "content_filter"),
        ("incomplete", None, "incomplete", "other"),
        ("cancelled", None, "cancelled", "other"),
        ("in_progress", None, "in_progress", "other"),
        ("some_future_status", None, "some_future_status", "other"),
    ],
)
def test_status_maps_to_finish_reason_and_stop(
    status: str, details: dict[str, str] | None, finish: str, stop: str
) -> None:
    body = copy.deepcopy(load("text")["body"])
    body["status"] = status
    body["incomplete_details"] = details
    decision = decided(adapter.parse_decision(200, body))
    assert (decision.finish_reason, decision.stop) == (finish, stop)


def test_arguments_as_object_are_accepted() -> None:
    body = copy.deepcopy(load("one_call")["body"])
    body["output"][1]["arguments"] = {"order_id": "ORD-482913"}
    decision = decided(adapter.parse_decision(200, body))
    assert decision.kind == "tool_call"
    assert decision.calls[0].arguments == {"order_id": "ORD-482913"}


@pytest.mark.parametrize("arguments", ["[1, 2]", "null", '"ORD-482913"', "{'a': 1}"])
def test_arguments_that_are_not_an_object_are_invalid(arguments: str) -> None:
    body = copy.deepcopy(load("one_call")["body"])
    body["output"][1]["arguments"] = arguments
    decision = decided(adapter.parse_decision(200, body))
    assert decision.kind == "invalid"
    assert decision.calls[0].arguments is None
    assert decision.calls[0].raw_arguments == arguments


def test_failed_response_inside_200_is_a_provider_error() -> None:
    fixture = load("failed")
    error = failed(adapter.parse_decision(fixture["status"], fixture["body"]))
    assert error.to_json() == fixture["expect"]


@pytest.mark.parametrize(
    "body",
    [
        None,
        "plain text",
        [1, 2],
        {},
        {"object": "list", "data": []},
        {"status": "completed", "output": "nope"},
        {"status": "completed", "output": [1, "x", None, {"type": 3}]},
        {"status": "completed", "output": [{"type": "function_call"}]},
        {"status": "completed", "output": [{"type": "message", "content": "hi"}]},
        {"status": "completed", "output": [{"type": "message", "content": [{"type": "refusal"}]}]},
        {"status": 7, "incomplete_details": "x", "model": 3, "output": []},
        {"error": {"message": "proxy said no", "code": 500}},
        {"status": "failed", "error": "flat string"},
        {"status": "failed", "error": None},
    ],
)
def test_odd_2xx_bodies_never_raise(body: Any) -> None:
    result = adapter.parse_decision(200, body)
    assert isinstance(result, Decision | ProviderError)


def test_call_without_fields_is_kept_raw() -> None:
    result = decided(
        adapter.parse_decision(200, {"status": "completed", "output": [{"type": "function_call"}]})
    )
    assert result.calls == (ToolCall(None, "", {}, None),)


# ---------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("case", load("errors")["cases"], ids=lambda case: case["name"])
def test_http_error_classification(case: dict[str, Any]) -> None:
    error = failed(adapter.parse_decision(case["status"], case["body"]))
    expect = case["expect"]
    assert error.status == case["status"]
    assert (error.type, error.code, error.retryable, error.retry_after) == (
        expect["type"],
        expect["code"],
        expect["retryable"],
        expect["retry_after"],
    )
    assert error.message
    assert error.raw is case["body"]


def test_rate_limit_retries_but_quota_does_not() -> None:
    cases = {case["name"]: case for case in load("errors")["cases"]}
    rate = failed(adapter.parse_decision(429, cases["rate_limit"]["body"]))
    quota = failed(adapter.parse_decision(429, cases["quota"]["body"]))
    assert rate.retryable
    assert not quota.retryable


def test_error_body_kept_as_stream_events() -> None:
    envelope = {"error": {"message": "bad", "type": "invalid_request_error", "code": "x"}}
    error = failed(adapter.parse_decision(400, [{"event": None, "data": envelope}]))
    assert (error.type, error.code, error.message) == ("invalid_request_error", "x", "bad")


def test_error_message_of_text_body_is_the_text() -> None:
    error = failed(adapter.parse_decision(503, "upstream connect error"))
    assert error.message == "upstream connect error"
    assert error.retryable


@pytest.mark.parametrize("case", load("stream_errors")["cases"], ids=lambda case: case["name"])
def test_in_stream_errors(case: dict[str, Any]) -> None:
    error = failed(adapter.parse_stream(200, events_of(case["events"])))
    assert error.to_json() == case["expect"]


def test_error_stream_with_http_error_status() -> None:
    body = {"error": {"message": "bad", "type": "invalid_request_error", "code": None}}
    error = failed(adapter.parse_stream(400, [StreamEvent(None, body)]))
    assert (error.status, error.type, error.message, error.retryable) == (
        400,
        "invalid_request_error",
        "bad",
        False,
    )


@pytest.mark.parametrize(
    "error",
    [
        ProviderError(429, "tokens", "rate_limit_exceeded", "Slow down.", True, retry_after=2.0),
        ProviderError(429, "insufficient_quota", "insufficient_quota", "No money.", False),
        ProviderError(401, "invalid_request_error", "invalid_api_key", "Bad key.", False),
        ProviderError(500, "server_error", None, "Oops.", True),
    ],
)
def test_render_error_round_trip(error: ProviderError) -> None:
    wire = adapter.render_error(error)
    assert wire.status == error.status
    parsed = failed(adapter.parse_decision(wire.status, json.loads(json.dumps(wire.body))))
    # retry_after travels in the retry-after header, which parse_decision does not see.
    assert parsed == ProviderError(
        error.status, error.type, error.code, error.message, error.retryable
    )
    if error.retry_after is not None:
        assert wire.headers["retry-after"] == "2"


def test_render_error_in_stream() -> None:
    error = ProviderError(500, "server_error", "server_error", "Model crashed.", True)
    wire = adapter.render_error(error, stream=True)
    assert wire.status == 200
    assert wire.events is not None and wire.events[-1].event == "error"
    parsed = failed(adapter.parse_stream(200, over_the_wire(wire.events)))
    # Documented: the flat error event carries neither an HTTP status nor an error type.
    assert parsed == ProviderError(200, None, "server_error", "Model crashed.", True)


# ---------------------------------------------------------------------------
# Streams


@pytest.mark.parametrize("name", STREAM_FIXTURES)
def test_stream_equals_its_non_streamed_twin(name: str) -> None:
    fixture = load(name)
    twin = load(fixture["twin"].removesuffix(".json"))
    streamed = decided(adapter.parse_stream(fixture["status"], events_of(fixture["events"])))
    plain = decided(adapter.parse_decision(twin["status"], twin["body"]))
    assert streamed == plain
    assert streamed.to_json() == twin["expect"]
    assert streamed.assistant_turn == plain.assistant_turn
    assert streamed.model == plain.model
    assert streamed.raw_response == fixture["events"]


@pytest.mark.parametrize("name", STREAM_FIXTURES)
def test_stream_reassembles_from_deltas_alone(name: str) -> None:
    """Without the terminal output or output_item.done, deltas rebuild the same decision."""
    fixture = load(name)
    twin = load(fixture["twin"].removesuffix(".json"))
    events = []
    for event in copy.deepcopy(fixture["events"]):
        data = event["data"]
        kind = data["type"] if isinstance(data, dict) else None
        if kind == "response.output_item.done" and data["item"]["type"] != "reasoning":
            continue
        if kind in ("response.completed", "response.incomplete"):
            data["response"]["output"] = []
        events.append(event)
    streamed = decided(adapter.parse_stream(200, events_of(events)))
    assert streamed == decided(adapter.parse_decision(200, twin["body"]))


def test_stream_done_sentinel_is_tolerated() -> None:
    fixture = load("stream_one_call")
    assert fixture["events"][-1]["data"] == "[DONE]"
    without = fixture["events"][:-1]
    with_sentinel = decided(adapter.parse_stream(200, events_of(fixture["events"])))
    assert with_sentinel == decided(adapter.parse_stream(200, events_of(without)))


def test_output_item_done_is_authoritative() -> None:
    """The guide's own example changes call_id between added and done; done wins."""
    fixture = copy.deepcopy(load("stream_one_call"))
    events = [e for e in fixture["events"] if e["data"] != "[DONE]"]
    for event in events:
        if event["data"]["type"] == "response.output_item.added":
            event["data"]["item"]["call_id"] = "call_from_added"
        if event["data"]["type"] == "response.completed":
            event["data"]["response"]["output"] = []
    decision = decided(adapter.parse_stream(200, events_of(events)))
    assert decision.calls[0].call_id == "call_Q7mZk2LwX9pR4tYv8NbC3sDf"


def test_stream_cut_mid_call_is_a_failure_keeping_what_arrived() -> None:
    fixture = load("stream_cut")
    decision = arrived(adapter.parse_stream(200, events_of(fixture["events"])))
    assert decision.to_json() == fixture["expect"]
    assert [item["type"] for item in decision.assistant_turn] == [
        "reasoning",
        "function_call",
        "function_call",
    ]


def test_stream_cut_after_complete_calls_is_still_a_failure() -> None:
    """Without a terminal event more parallel calls may have been lost."""
    events = [
        e
        for e in load("stream_one_call")["events"]
        if not isinstance(e["data"], str) and e["data"]["type"] != "response.completed"
    ]
    decision = arrived(adapter.parse_stream(200, events_of(events)))
    assert (decision.kind, decision.stop, decision.finish_reason) == ("invalid", "other", None)
    assert decision.calls[0].arguments == {"order_id": "ORD-482913"}


def test_stream_cut_in_text_is_a_failure_keeping_its_text() -> None:
    """A text prefix cannot be told from a turn that would have gone on to call a tool."""
    events = load("stream_text")["events"][:-3]
    decision = arrived(adapter.parse_stream(200, events_of(events)))
    assert (decision.kind, decision.stop, decision.finish_reason) == ("invalid", "other", None)
    assert decision.text == "Здравствуйте! Назовите, пожалуйста, номер заказа в формате ORD-123456."


def test_empty_stream_is_truncated() -> None:
    decision = arrived(adapter.parse_stream(200, []))
    assert decision == Decision(kind="invalid", finish_reason=None, stop="other")


def test_stream_keyed_by_item_id_when_output_index_missing() -> None:
    events = [
        StreamEvent(
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"},
            },
        ),
        StreamEvent(
            "response.function_call_arguments.delta",
            {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{}"},
        ),
        StreamEvent(
            "response.completed",
            {"type": "response.completed", "response": {"status": "completed", "output": []}},
        ),
    ]
    decision = decided(adapter.parse_stream(200, events))
    assert decision.calls == (ToolCall("call_1", "f", {}, "{}"),)


def test_stream_event_name_used_when_data_lacks_type() -> None:
    body = load("text")["body"]
    events = [StreamEvent("response.completed", {"response": body})]
    assert decided(adapter.parse_stream(200, events)) == decided(adapter.parse_decision(200, body))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=10,
)
event_types = st.sampled_from([*sorted(HANDLERS), "error", "response.failed", "x"])
odd_events = st.builds(
    StreamEvent,
    st.none() | event_types,
    json_values
    | st.fixed_dictionaries(
        {"type": event_types},
        optional={
            "output_index": st.integers(-2, 3) | st.text(max_size=2),
            "content_index": st.integers(-2, 3) | st.none(),
            "item_id": st.text(max_size=2),
            "delta": json_values,
            "item": json_values,
            "part": json_values,
            "response": json_values,
            "arguments": json_values,
            "text": json_values,
        },
    ),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(odd_events, max_size=8))
def test_parse_stream_never_raises(events: list[StreamEvent]) -> None:
    assert isinstance(adapter.parse_stream(200, events), Decision | ProviderError)


@settings(max_examples=100, deadline=None)
@given(json_values, st.sampled_from([200, 400, 429, 500]))
def test_parse_decision_never_raises(body: Any, status: int) -> None:
    assert isinstance(adapter.parse_decision(status, body), Decision | ProviderError)


# ---------------------------------------------------------------------------
# build_request


SYSTEM = Message("system", "Ты — ассистент службы доставки.")
USER = Message("user", "Где заказ ORD-123456?")


def build(
    contract: Contract, mode: str = "auto", tool: str | None = None, **kwargs: Any
) -> dict[str, Any]:
    settings = RequestSettings(tool_choice=ToolChoice(mode, tool), **kwargs)  # type: ignore[arg-type]
    request = adapter.build_request("o4-mini", [SYSTEM, USER], tools_of(contract), settings)
    return request.body


def test_request_basics(contract: Contract) -> None:
    request = adapter.build_request(
        "o4-mini", [SYSTEM, USER], tools_of(contract), RequestSettings()
    )
    assert (request.method, request.path, request.stream) == ("POST", "/responses", False)
    assert request.headers == {"content-type": "application/json"}
    body = request.body
    assert body["model"] == "o4-mini"
    assert body["instructions"] == SYSTEM.content
    assert body["input"] == [{"role": "user", "content": USER.content}]
    assert body["store"] is False
    assert body["tool_choice"] == "auto"
    # `include` is a reasoning-model option, asked for through a target's extra_body.
    for absent in ("include", "parallel_tool_calls", "temperature", "max_output_tokens", "stream"):
        assert absent not in body
    assert body["tools"][0] == {
        "type": "function",
        "name": "get_order",
        "description": contract.tools[0].description,
        "parameters": contract.tools[0].parameters,
        "strict": False,
    }
    assert [tool["name"] for tool in body["tools"]] == list(contract.names)


def test_no_credentials_in_request(contract: Contract) -> None:
    request = adapter.build_request("m", [USER], tools_of(contract), RequestSettings(stream=True))
    assert not {"authorization", "api-key"} & {key.lower() for key in request.headers}


@pytest.mark.parametrize(
    ("mode", "tool", "wire"),
    [
        ("auto", None, "auto"),
        ("required", None, "required"),
        ("none", None, "none"),
        ("forced", "quote_delivery", {"type": "function", "name": "quote_delivery"}),
    ],
)
def test_tool_choice_modes(contract: Contract, mode: str, tool: str | None, wire: Any) -> None:
    body = build(contract, mode, tool, parallel_tool_calls=False)
    assert body["tool_choice"] == wire
    assert len(body["tools"]) == 3
    assert body["parallel_tool_calls"] is False


def test_no_tools_mode_sends_no_tool_keys(contract: Contract) -> None:
    body = build(contract, "no_tools", parallel_tool_calls=False)
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(body)


def test_forced_without_tool_name_is_refused(contract: Contract) -> None:
    with pytest.raises(ValueError, match="forced"):
        build(contract, "forced")


@pytest.mark.parametrize(("parallel", "sent"), [(None, None), (True, True), (False, False)])
def test_parallel_policy(contract: Contract, parallel: bool | None, sent: bool | None) -> None:
    body = build(contract, parallel_tool_calls=parallel)
    assert body.get("parallel_tool_calls") == sent


def test_sampling_limits_and_stream(contract: Contract) -> None:
    settings = RequestSettings(temperature=0.0, max_output_tokens=500, stream=True)
    request = adapter.build_request("m", [USER], tools_of(contract), settings)
    assert request.body["temperature"] == 0.0
    assert request.body["max_output_tokens"] == 500
    assert request.body["stream"] is True
    assert request.stream
    assert request.path == "/responses"
    assert "instructions" not in request.body


def test_strict_flag_is_always_explicit(contract: Contract) -> None:
    assert {tool["strict"] for tool in build(contract)["tools"]} == {False}
    assert {tool["strict"] for tool in build(contract, strict=True)["tools"]} == {True}


def test_plain_messages_and_wire_items_in_order() -> None:
    history: list[HistoryItem] = [
        SYSTEM,
        USER,
        Message("assistant", "Уточните номер."),
        WireItem({"type": "reasoning", "id": "rs_1", "summary": []}),
        WireItem([{"type": "function_call_output", "call_id": "c", "output": "{}"}]),
        Message("system", "Отвечай кратко."),
    ]
    body = adapter.build_request("m", history, [], RequestSettings()).body
    assert body["input"] == [
        {"role": "user", "content": USER.content},
        {"role": "assistant", "content": "Уточните номер."},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call_output", "call_id": "c", "output": "{}"},
        {"role": "system", "content": "Отвечай кратко."},
    ]


@pytest.mark.parametrize(
    "choice",
    [
        ToolChoice("auto"),
        ToolChoice("required"),
        ToolChoice("none"),
        ToolChoice("forced", "cancel_order"),
        ToolChoice("no_tools"),
    ],
)
@pytest.mark.parametrize("parallel", [None, False])
def test_read_request_inverts_build(
    contract: Contract, choice: ToolChoice, parallel: bool | None
) -> None:
    settings = RequestSettings(tool_choice=choice, parallel_tool_calls=parallel, stream=True)
    request = adapter.build_request("o4-mini", [SYSTEM, USER], tools_of(contract), settings)
    view = adapter.read_request(request.body, request.path)
    assert view.model == "o4-mini"
    assert view.last_user_text == USER.content
    assert view.tool_result_turns == 0
    assert view.tool_names == (() if choice.mode == "no_tools" else contract.names)
    assert view.tool_choice == choice
    assert view.parallel_tool_calls == (None if choice.mode == "no_tools" else parallel)
    assert view.stream is True


def test_read_request_of_odd_bodies() -> None:
    view = adapter.read_request({"input": "hello", "tools": [{"type": "web_search"}]}, "/responses")
    assert (view.last_user_text, view.tool_names, view.tool_choice) == (
        "hello",
        (),
        ToolChoice("auto"),
    )
    parts = {"input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}
    assert adapter.read_request(parts, "/responses").last_user_text == "hi"
    assert adapter.read_request(None, "/responses").model is None


# ---------------------------------------------------------------------------
# sent_tools and the strict transform


@pytest.mark.parametrize(
    "choice",
    [
        ToolChoice("auto"),
        ToolChoice("required"),
        ToolChoice("none"),
        ToolChoice("forced", "get_order"),
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_sent_tools_give_back_the_contract(
    contract: Contract, choice: ToolChoice, strict: bool
) -> None:
    """The delivery contract is already strict-shaped, so strict sends it unchanged too."""
    settings = RequestSettings(tool_choice=choice, strict=strict)
    body = adapter.build_request("m", [USER], tools_of(contract), settings).body
    assert adapter.sent_tools(body) == [as_sent(tool) for tool in contract.tools]


def test_sent_tools_skip_hosted_and_odd_tools() -> None:
    body = {
        "tools": [
            {"type": "web_search"},
            {"type": "function", "name": "f", "parameters": None, "strict": True},
            {"type": "function"},
            "junk",
            {"type": "mcp", "server_label": "x"},
        ]
    }
    assert adapter.sent_tools(body) == [
        ToolSpec("f", "", {"type": "object", "properties": {}}, "read")
    ]
    assert adapter.sent_tools({}) == []
    assert adapter.sent_tools("not a body") == []


NASTY = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
        "service": {"type": "string", "enum": ["standard", "express"]},
        "weight_kg": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000},
        "address": {"$ref": "#/$defs/address"},
        "note": {"type": ["string", "null"]},
        "tags": {
            "type": "array",
            "items": {"type": "object", "properties": {"k": {"type": "string"}}},
        },
    },
    "required": ["order_id"],
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": {"type": "string"},
        }
    },
}
NASTY_STRICT = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
        # An enum keeps its branch whole; a type union alone would not let null through it.
        "service": {
            "anyOf": [{"type": "string", "enum": ["standard", "express"]}, {"type": "null"}]
        },
        "weight_kg": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1000},
        "address": {"anyOf": [{"$ref": "#/$defs/address"}, {"type": "null"}]},
        "note": {"type": ["string", "null"]},
        "tags": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "properties": {"k": {"type": ["string", "null"]}},
                "additionalProperties": False,
                "required": ["k"],
            },
        },
    },
    "required": ["order_id", "service", "weight_kg", "address", "note", "tags"],
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": ["string", "null"]}},
            "required": ["city", "zip"],
            "additionalProperties": False,
        }
    },
    "additionalProperties": False,
}


def test_wire_schema_strict_transform_golden() -> None:
    before = copy.deepcopy(NASTY)
    assert adapter.wire_schema(NASTY, strict=True) == NASTY_STRICT
    assert before == NASTY


def test_wire_schema_off_is_an_unchanged_copy() -> None:
    sent = adapter.wire_schema(NASTY, strict=False)
    assert sent == NASTY
    assert sent is not NASTY


def test_wire_schema_strict_is_idempotent() -> None:
    once = adapter.wire_schema(NASTY, strict=True)
    assert adapter.wire_schema(once, strict=True) == once


def test_sent_tools_show_the_documented_strict_difference() -> None:
    """Strict schemas come back as sent; schema diff compares them with wire_schema."""
    tool = ToolSpec("update_address", "Change the delivery address.", NASTY, "write")
    settings = RequestSettings(strict=True)
    body = adapter.build_request("m", [USER], [tool], settings).body
    [sent] = adapter.sent_tools(body)
    assert sent.parameters == adapter.wire_schema(NASTY, strict=True)
    assert sent.parameters != NASTY


# ---------------------------------------------------------------------------
# append_tool_result


def results_for(decision: Decision, *errors: bool) -> list[ToolResult]:
    contents: list[dict[str, Any]] = [
        {"status": "in_transit", "city": "Самара"},
        {"price_rub": 840},
    ]
    return [
        ToolResult(
            call.call_id,
            call.name,
            {"error": "service unavailable"} if is_error else contents[index],
            is_error,
        )
        for index, (call, is_error) in enumerate(zip(decision.calls, errors, strict=True))
    ]


def test_append_one_result() -> None:
    body = load("one_call")["body"]
    decision = decided(adapter.parse_decision(200, body))
    history = adapter.append_tool_result([SYSTEM, USER], decision, results_for(decision, False))
    assert history[:2] == [SYSTEM, USER]
    assert [item.payload for item in history[2:4]] == body["output"]  # type: ignore[union-attr]
    assert history[4] == WireItem(
        {
            "type": "function_call_output",
            "call_id": "call_Q7mZk2LwX9pR4tYv8NbC3sDf",
            "output": '{"city":"Самара","status":"in_transit"}',
        }
    )


def test_append_two_parallel_results_with_an_error() -> None:
    body = load("parallel_calls")["body"]
    decision = decided(adapter.parse_decision(200, body))
    results = results_for(decision, False, True)
    history = adapter.append_tool_result([USER], decision, results)
    payloads = [item.payload for item in history[1:] if isinstance(item, WireItem)]
    assert payloads[:3] == body["output"]
    assert payloads[3:] == [
        {
            "type": "function_call_output",
            "call_id": "call_H3kLp9QwE2rT6yUi1oPa5sDg",
            "output": '{"city":"Самара","status":"in_transit"}',
        },
        {
            "type": "function_call_output",
            "call_id": "call_J8fGh4JkL7zXc2vBn6mQw1eR",
            "output": '{"error":"service unavailable"}',
        },
    ]


def test_next_request_keeps_reasoning_next_to_its_call(contract: Contract) -> None:
    body = load("parallel_calls")["body"]
    decision = decided(adapter.parse_decision(200, body))
    history = adapter.append_tool_result(
        [SYSTEM, USER], decision, results_for(decision, False, False)
    )
    request = adapter.build_request("o4-mini", history, tools_of(contract), RequestSettings())
    items = request.body["input"]
    assert [item.get("type", "message") for item in items] == [
        "message",
        "reasoning",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert items[1] == body["output"][0]  # verbatim, encrypted_content included
    view = adapter.read_request(request.body, request.path)
    assert view.tool_result_turns == 1
    assert view.last_user_text == USER.content


def test_append_after_a_streamed_turn_matches_the_plain_one() -> None:
    plain = decided(adapter.parse_decision(200, load("parallel_calls")["body"]))
    streamed = decided(adapter.parse_stream(200, events_of(load("stream_parallel")["events"])))
    results = results_for(plain, False, False)
    assert adapter.append_tool_result([USER], streamed, results) == adapter.append_tool_result(
        [USER], plain, results
    )


def test_result_without_call_id_takes_the_call_of_its_name() -> None:
    decision = decided(adapter.parse_decision(200, load("parallel_calls")["body"]))
    results = [ToolResult(None, "quote_delivery", {"price_rub": 840})]
    history = adapter.append_tool_result([], decision, results)
    assert history[-1].payload["call_id"] == "call_J8fGh4JkL7zXc2vBn6mQw1eR"  # type: ignore[union-attr]


def test_append_without_assistant_turn_rebuilds_the_calls() -> None:
    original = decided(adapter.parse_decision(200, load("one_call")["body"]))
    decision = Decision.from_json(original.to_json())
    history = adapter.append_tool_result([], decision, results_for(decision, False))
    assert next(item.payload for item in history if isinstance(item, WireItem)) == {
        "type": "function_call",
        "call_id": "call_Q7mZk2LwX9pR4tYv8NbC3sDf",
        "name": "get_order",
        "arguments": '{"order_id":"ORD-482913"}',
    }


# ---------------------------------------------------------------------------
# render_response and the round-trip property


@pytest.mark.parametrize(
    ("decision", "finish", "stop"),
    [
        (Decision(kind="text", text="hi"), "completed", "end"),
        (Decision(kind="text", text="hi", stop="length"), "incomplete:max_output_tokens", "length"),
        (
            Decision(kind="refusal", stop="content_filter"),
            "incomplete:content_filter",
            "content_filter",
        ),
        (
            Decision(
                kind="tool_call",
                calls=(ToolCall("call_1", "get_order", {}, "{}"),),
                stop="tool_call",
            ),
            "completed",
            "tool_call",
        ),
    ],
)
def test_render_fills_in_the_natural_finish_reason(
    decision: Decision, finish: str, stop: str
) -> None:
    parsed = decided(adapter.parse_decision(200, adapter.render_response(decision).body))
    assert (parsed.finish_reason, parsed.stop, parsed.kind) == (finish, stop, decision.kind)
    assert parsed.model == "fcreplay-simulator"


def test_rendered_stream_looks_like_the_real_one() -> None:
    args = '{"origin":"Казань","destination":"Самара","weight_kg":2.5,"service":"express"}'
    decision = Decision(
        kind="tool_call",
        text="Считаю.",
        calls=(ToolCall("call_1", "quote_delivery", json.loads(args), args),),
        finish_reason="completed",
        stop="tool_call",
        model="o4-mini-2025-04-16",
    )
    events = adapter.render_response(decision, stream=True).events
    assert events is not None
    kinds = [event.event for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert all(event.event == event.data["type"] for event in events)
    assert [event.data["sequence_number"] for event in events] == list(range(len(events)))
    deltas = [
        e.data["delta"] for e in events if e.event == "response.function_call_arguments.delta"
    ]
    assert len(deltas) > 5
    assert "".join(deltas) == args
    assert "response.output_text.delta" in kinds
    assert kinds.count("response.output_item.done") == 2
    assert decided(adapter.parse_stream(200, over_the_wire(events))).model == "o4-mini-2025-04-16"


def test_render_refusal_without_text_uses_a_stock_refusal() -> None:
    parsed = decided(
        adapter.parse_decision(200, adapter.render_response(Decision(kind="refusal")).body)
    )
    assert (parsed.kind, parsed.stop) == ("refusal", "refusal")
    assert parsed.text


call_ids = st.from_regex(r"call_[A-Za-z0-9]{24}", fullmatch=True)
names = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_-]{0,20}", fullmatch=True)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
Encoder = Callable[[dict[str, Any]], str]
encoders: st.SearchStrategy[Encoder] = st.sampled_from(
    [encode_arguments, json.dumps, lambda value: json.dumps(value, indent=1)]
)


@st.composite
def good_calls(draw: st.DrawFn) -> ToolCall:
    arguments = draw(st.dictionaries(st.text(max_size=8), values, max_size=4))
    raw = draw(encoders)(arguments)
    return ToolCall(draw(call_ids), draw(names), decode_arguments(raw), raw)


@st.composite
def bad_calls(draw: st.DrawFn) -> ToolCall:
    raw = draw(
        st.sampled_from(['{"order_id": "ORD-1', "[1]", "null", "{'a': 1}", "{"])
        | st.text(min_size=1, max_size=20).filter(lambda text: decode_arguments(text) is None)
    )
    return ToolCall(draw(call_ids), draw(names), None, raw)


texts = st.text(max_size=40)
SHAPES: dict[str, tuple[str, str, str]] = {
    # shape: (kind, finish_reason, stop)
    "text": ("text", "completed", "end"),
    "text_length": ("text", "incomplete:max_output_tokens", "length"),
    "text_filtered": ("text", "incomplete:content_filter", "content_filter"),
    "tool_call": ("tool_call", "completed", "tool_call"),
    "bad_json": ("invalid", "completed", "tool_call"),
    "call_cut": ("invalid", "incomplete:max_output_tokens", "length"),
    "refusal": ("refusal", "completed", "refusal"),
    "refusal_cut": ("refusal", "incomplete:max_output_tokens", "length"),
    "blocked": ("refusal", "incomplete:content_filter", "content_filter"),
}


@st.composite
def decisions(draw: st.DrawFn) -> Decision:
    shape = draw(st.sampled_from(sorted(SHAPES)))
    kind, finish, stop = SHAPES[shape]
    text: str | None = draw(st.none() | texts)
    calls: tuple[ToolCall, ...] = ()
    if shape in ("tool_call", "bad_json", "call_cut"):
        calls = tuple(draw(st.lists(good_calls() | bad_calls(), min_size=1, max_size=3)))
        if shape == "tool_call":
            calls = tuple(draw(st.lists(good_calls(), min_size=1, max_size=3)))
        if shape == "bad_json" and all(call.arguments is not None for call in calls):
            calls = (*calls, draw(bad_calls()))
    if shape in ("text_filtered", "refusal", "refusal_cut"):
        text = draw(texts)  # without any content these would parse as a safety block
    if shape == "blocked":
        text = None
    model = draw(st.none() | st.sampled_from(["o4-mini-2025-04-16", "gpt-4.1-2025-04-14"]))
    return Decision(kind, text, calls, finish, stop, model=model)  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decisions())
def test_round_trip_plain(decision: Decision) -> None:
    body = json.loads(json.dumps(adapter.render_response(decision).body))
    parsed = decided(adapter.parse_decision(200, body))
    assert parsed == decision
    assert parsed.model == (decision.model or "fcreplay-simulator")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decisions())
def test_round_trip_streamed(decision: Decision) -> None:
    wire = adapter.render_response(decision, stream=True)
    assert wire.status == 200 and wire.body is None
    streamed = decided(adapter.parse_stream(200, over_the_wire(wire.events)))
    assert streamed == decision
    plain = decided(adapter.parse_decision(200, adapter.render_response(decision).body))
    assert streamed.assistant_turn == plain.assistant_turn
