"""Tests of the Anthropic Messages adapter.

Every fixture under fixtures/anthropic/ is synthetic (each says so in its
`_comment`): bodies and streams modelled on the examples of the providers
reference, section 4, with the example suite's delivery tools. The official SDK
is used only as an oracle for the strict schema transform.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fcreplay.adapters import anthropic as adapter
from fcreplay.adapters._wire import decode_arguments, result_text
from fcreplay.adapters.registry import get_adapter
from fcreplay.decision import Decision, DecisionKind, ProviderError, Stop, ToolCall
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

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def body_of(name: str) -> Any:
    return load(name)["body"]


def events_of(name: str) -> list[StreamEvent]:
    return [StreamEvent(item["event"], item["data"]) for item in load(name)["events"]]


def parsed(name: str) -> Decision:
    fixture = load(name)
    decision = adapter.parse_decision(fixture["status"], fixture["body"])
    assert isinstance(decision, Decision)
    return decision


def streamed(name: str) -> Decision:
    fixture = load(name)
    decision = adapter.parse_stream(fixture["status"], events_of(name))
    assert isinstance(decision, Decision)
    return decision


def message(content: list[Any], stop_reason: Any, **extra: Any) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
        **extra,
    }


def tool_use(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


# --- module surface ----------------------------------------------------------------


def test_registry_returns_this_module_with_its_constants() -> None:
    assert get_adapter("anthropic") is adapter
    assert adapter.NAME == "anthropic"
    assert adapter.DEFAULT_BASE_URL == "https://api.anthropic.com"
    assert (adapter.API_KEY_HEADER, adapter.API_KEY_PREFIX) == ("x-api-key", "")
    assert adapter.VERSION


# --- parse_decision ----------------------------------------------------------------


def test_text_only_answer() -> None:
    decision = parsed("text")
    body = body_of("text")
    assert decision == Decision(
        kind="text",
        text="Уточните, пожалуйста, номер заказа в формате ORD-123456.",
        finish_reason="end_turn",
        stop="end",
    )
    assert decision.model == "claude-sonnet-4-5"
    assert decision.raw_response == body
    assert decision.assistant_turn == {"role": "assistant", "content": body["content"]}


def test_one_call_keeps_the_input_object_as_raw_and_decoded_arguments() -> None:
    decision = parsed("one_call")
    arguments = {"order_id": "ORD-123456"}
    assert decision == Decision(
        kind="tool_call",
        text="Проверю статус заказа.",
        calls=(ToolCall("toolu_01A09q90qw90lq917835lq9", "get_order", arguments, arguments),),
        finish_reason="tool_use",
        stop="tool_call",
    )


def test_parallel_calls_keep_their_order() -> None:
    decision = parsed("parallel_calls")
    assert decision.kind == "tool_call"
    assert decision.text is None
    assert [(call.call_id, call.name) for call in decision.calls] == [
        ("toolu_01", "get_order"),
        ("toolu_02", "quote_delivery"),
    ]
    assert decision.calls[1].arguments == {
        "origin": "Москва",
        "destination": "Казань",
        "weight_kg": 2.5,
        "service": "express",
    }


def test_refusal_keeps_its_text() -> None:
    decision = parsed("refusal")
    assert decision == Decision(
        kind="refusal",
        text="Я не могу помочь с этим запросом.",
        finish_reason="refusal",
        stop="refusal",
    )


def test_max_tokens_with_a_trailing_tool_use_is_invalid_and_keeps_the_call() -> None:
    decision = parsed("truncated_call")
    assert decision.kind == "invalid"
    assert (decision.finish_reason, decision.stop) == ("max_tokens", "length")
    assert decision.calls == (
        ToolCall("toolu_01TrUnc4t3d", "quote_delivery", {"origin": "Москва"}, {"origin": "Москва"}),
    )


def test_server_tool_blocks_are_never_calls_but_stay_in_the_turn() -> None:
    decision = parsed("server_tool")
    body = body_of("server_tool")
    assert decision.kind == "text"
    assert decision.calls == ()
    assert decision.text == "I'll search for that.Python 3.x was released."
    assert decision.assistant_turn["content"] == body["content"]
    kinds = [block["type"] for block in decision.assistant_turn["content"]]
    assert "server_tool_use" in kinds and "web_search_tool_result" in kinds


def test_thinking_is_not_text_and_its_signature_is_kept_verbatim() -> None:
    decision = parsed("thinking_call")
    body = body_of("thinking_call")
    assert decision.text is None
    assert decision.kind == "tool_call"
    assert decision.assistant_turn == {"role": "assistant", "content": body["content"]}
    assert decision.assistant_turn["content"][0]["signature"] == body["content"][0]["signature"]


@pytest.mark.parametrize(
    ("stop_reason", "stop", "kind"),
    [
        ("end_turn", "end", "text"),
        ("stop_sequence", "end", "text"),
        ("max_tokens", "length", "text"),
        ("model_context_window_exceeded", "length", "text"),
        ("pause_turn", "pause", "text"),
        ("refusal", "refusal", "refusal"),
        ("a_future_reason", "other", "text"),
        (None, "other", "text"),
    ],
)
def test_stop_reasons_without_calls(stop_reason: Any, stop: Stop, kind: DecisionKind) -> None:
    body = message([{"type": "text", "text": "hi"}], stop_reason)
    decision = adapter.parse_decision(200, body)
    assert isinstance(decision, Decision)
    assert (decision.kind, decision.stop, decision.finish_reason) == (kind, stop, stop_reason)


def test_pause_turn_with_only_server_blocks_has_nothing_to_run() -> None:
    body = message(
        [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"q": "x"},
            }
        ],
        "pause_turn",
    )
    decision = adapter.parse_decision(200, body)
    assert decision == Decision(kind="text", finish_reason="pause_turn", stop="pause")


def test_a_call_is_detected_from_blocks_not_from_the_stop_reason() -> None:
    body = message([tool_use("toolu_1", "get_order", {"order_id": "ORD-000001"})], "end_turn")
    decision = adapter.parse_decision(200, body)
    assert isinstance(decision, Decision)
    assert (decision.kind, decision.stop) == ("tool_call", "end")


@pytest.mark.parametrize("stop_reason", ["max_tokens", "model_context_window_exceeded"])
def test_any_call_in_a_turn_cut_by_a_length_limit_is_invalid(stop_reason: str) -> None:
    # The call is complete here, but the turn was cut: further parallel calls may be missing.
    body = message(
        [
            tool_use("toolu_1", "get_order", {"order_id": "ORD-000001"}),
            {"type": "text", "text": "…"},
        ],
        stop_reason,
    )
    decision = adapter.parse_decision(200, body)
    assert isinstance(decision, Decision)
    assert decision.kind == "invalid"
    assert len(decision.calls) == 1


def test_refusal_wins_over_calls_that_were_being_written() -> None:
    body = message([tool_use("toolu_1", "cancel_order", {})], "refusal")
    decision = adapter.parse_decision(200, body)
    assert isinstance(decision, Decision)
    assert decision.kind == "refusal"
    assert len(decision.calls) == 1


def test_empty_text_block_gives_empty_text_and_no_block_gives_none() -> None:
    empty = adapter.parse_decision(200, message([{"type": "text", "text": ""}], "end_turn"))
    nothing = adapter.parse_decision(200, message([], "end_turn"))
    assert isinstance(empty, Decision) and isinstance(nothing, Decision)
    assert (empty.text, nothing.text) == ("", None)


@pytest.mark.parametrize(
    ("raw_input", "arguments", "raw_arguments"),
    [
        ('{"a": 1', None, '{"a": 1'),
        ([1, 2], None, "[1, 2]"),
        (None, {}, None),
    ],
)
def test_odd_tool_inputs_are_kept_raw_and_never_repaired(
    raw_input: Any, arguments: Any, raw_arguments: Any
) -> None:
    block = {"type": "tool_use", "id": "toolu_x", "name": "get_order"}
    if raw_input is not None:
        block["input"] = raw_input
    decision = adapter.parse_decision(200, message([block], "tool_use"))
    assert isinstance(decision, Decision)
    assert decision.calls == (ToolCall("toolu_x", "get_order", arguments, raw_arguments),)
    assert decision.kind == ("invalid" if arguments is None else "tool_call")


@pytest.mark.parametrize(
    "body",
    [
        [],
        "not json at all",
        None,
        {"type": "message"},
        {"content": "text instead of blocks"},
        {"content": [None, 3, "x", {"type": "tool_use"}, {"type": "text", "text": 5}]},
        {"content": [], "stop_reason": 7, "model": ["m"]},
    ],
)
def test_unexpected_shapes_never_raise(body: Any) -> None:
    result = adapter.parse_decision(200, body)
    assert isinstance(result, Decision | ProviderError)


def test_a_message_without_content_is_an_invalid_response_error() -> None:
    result = adapter.parse_decision(200, {"type": "message"})
    assert isinstance(result, ProviderError)
    assert (result.type, result.retryable) == ("invalid_response", False)


def test_an_error_envelope_inside_a_200_is_an_error_with_its_real_status() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    result = adapter.parse_decision(200, body)
    assert isinstance(result, ProviderError)
    assert (result.status, result.type, result.retryable) == (529, "overloaded_error", True)


# --- errors ------------------------------------------------------------------------


@pytest.mark.parametrize("case", load("errors")["cases"], ids=lambda case: case["name"])
def test_error_classification(case: dict[str, Any]) -> None:
    result = adapter.parse_decision(case["status"], case["body"])
    assert isinstance(result, ProviderError)
    expect = case["expect"]
    assert result.status == case["status"]
    assert result.type == expect["type"]
    assert result.message == expect["message"]
    assert result.retryable is expect["retryable"]
    assert result.code == expect.get("code")
    assert result.raw == case["body"]


def test_render_error_round_trips_through_parse() -> None:
    for case in load("errors")["cases"]:
        original = adapter.parse_decision(case["status"], case["body"])
        assert isinstance(original, ProviderError)
        if original.type is None:
            continue
        wire = adapter.render_error(original)
        again = adapter.parse_decision(wire.status, wire.body)
        assert again == original


def test_render_error_defaults_the_type_from_the_status_and_sets_retry_after() -> None:
    error = ProviderError(429, None, None, "slow down", True, retry_after=1.2)
    wire = adapter.render_error(error)
    assert wire.status == 429
    assert wire.body["error"] == {"type": "rate_limit_error", "message": "slow down"}
    assert wire.headers["retry-after"] == "2"


def test_render_error_in_a_stream_is_an_error_event_after_a_200() -> None:
    error = ProviderError(529, "overloaded_error", None, "Overloaded", True)
    wire = adapter.render_error(error, stream=True)
    assert wire.status == 200 and wire.events is not None
    result = adapter.parse_stream(wire.status, wire.events)
    assert result == error


# --- streams -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "body"),
    [
        ("stream_text", "text"),
        ("stream_one_call", "one_call"),
        ("stream_parallel", "parallel_calls"),
        ("stream_thinking", "thinking_call"),
        ("stream_server_tool", "server_tool"),
    ],
)
def test_a_stream_gives_the_decision_of_its_non_streamed_twin(stream: str, body: str) -> None:
    from_stream, from_body = streamed(stream), parsed(body)
    assert from_stream == from_body
    assert from_stream.model == from_body.model
    assert from_stream.assistant_turn == from_body.assistant_turn
    assert from_stream.raw_response == load(stream)["events"]


def test_reassembly_does_not_touch_the_recorded_events() -> None:
    events = events_of("stream_one_call")
    before = json.dumps([event.data for event in events])
    streamed_decision = adapter.parse_stream(200, events)
    assert isinstance(streamed_decision, Decision)
    assert json.dumps([event.data for event in events]) == before


def test_a_stream_tool_use_whose_json_does_not_parse_is_invalid_and_kept_raw() -> None:
    decision = streamed("stream_invalid_json")
    assert decision.kind == "invalid"
    assert (decision.finish_reason, decision.stop) == ("max_tokens", "length")
    assert decision.calls == (ToolCall("toolu_01Cut", "quote_delivery", None, '{"origin": "Моск'),)


def test_a_stream_without_message_stop_is_a_failure_keeping_what_arrived() -> None:
    fixture = load("stream_cut")
    decision = arrived(adapter.parse_stream(fixture["status"], events_of("stream_cut")))
    assert decision == Decision(
        kind="invalid",
        text="Отменяю заказ.",
        calls=(ToolCall("toolu_01Drop", "cancel_order", None, '{"order_id": "ORD-1234'),),
        finish_reason=None,
        stop="other",
    )


def test_a_text_stream_cut_before_message_stop_is_not_a_text_answer() -> None:
    events = events_of("stream_text")
    assert events[-1].event == "message_stop"
    decision = arrived(adapter.parse_stream(200, events[:-1]))
    assert (decision.kind, decision.finish_reason, decision.stop) == ("invalid", None, "other")
    assert decision.text == "Уточните, пожалуйста, номер заказа в формате ORD-123456."


def test_an_empty_stream_is_truncated() -> None:
    decision = arrived(adapter.parse_stream(200, []))
    assert decision == Decision(kind="invalid", finish_reason=None, stop="other")


def test_an_error_event_after_a_200_is_a_retryable_overload() -> None:
    result = adapter.parse_stream(200, events_of("stream_error"))
    assert isinstance(result, ProviderError)
    assert (result.status, result.type, result.message) == (529, "overloaded_error", "Overloaded")
    assert result.retryable is True
    assert result.raw == load("stream_error")["events"]


@pytest.mark.parametrize("where", [0, 3, -1])
@pytest.mark.parametrize("named", [True, False])
def test_an_error_event_anywhere_in_a_200_stream_is_the_answer(where: int, named: bool) -> None:
    # Read in the one pass over the events: what came before the error is dropped, and the
    # error reads as when it comes first, by its event name or by its data's type alone.
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    events = events_of("stream_text")
    events.insert(
        where if where >= 0 else len(events), StreamEvent("error" if named else None, error)
    )
    result = adapter.parse_stream(200, events)
    assert isinstance(result, ProviderError)
    assert (result.status, result.type, result.message) == (529, "overloaded_error", "Overloaded")
    assert result.raw == [{"event": event.event, "data": event.data} for event in events]


def test_an_error_event_of_a_non_2xx_stream_keeps_the_status() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    result = adapter.parse_stream(503, [*events_of("stream_text"), StreamEvent(None, error)])
    assert isinstance(result, ProviderError)
    assert (result.status, result.type, result.message) == (503, "overloaded_error", "Overloaded")


def test_an_error_named_event_without_object_data_is_an_error() -> None:
    result = adapter.parse_stream(200, [*events_of("stream_text"), StreamEvent("error", "boom")])
    assert isinstance(result, ProviderError)
    assert result.message == "boom"


def test_a_no_argument_tool_streams_as_an_empty_buffer_meaning_an_empty_object() -> None:
    events = [
        StreamEvent("message_start", {"type": "message_start", "message": {"model": "m"}}),
        StreamEvent(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "ping", "input": {}},
            },
        ),
        StreamEvent(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": ""},
            },
        ),
        StreamEvent("content_block_stop", {"type": "content_block_stop", "index": 0}),
        StreamEvent(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        ),
        StreamEvent("message_stop", {"type": "message_stop"}),
    ]
    decision = adapter.parse_stream(200, events)
    assert isinstance(decision, Decision)
    assert decision.calls == (ToolCall("toolu_1", "ping", {}, {}),)
    assert decision.kind == "tool_call"


def test_stream_noise_is_ignored() -> None:
    events = [
        StreamEvent(None, "not json"),
        StreamEvent("content_block_delta", {"type": "content_block_delta", "index": 9}),
        *events_of("stream_text"),
        StreamEvent("ping", {"type": "ping"}),
    ]
    assert adapter.parse_stream(200, events) == parsed("text")


def test_a_non_2xx_stream_status_is_an_error() -> None:
    result = adapter.parse_stream(503, [])
    assert isinstance(result, ProviderError)
    assert (result.status, result.retryable) == (503, True)


# --- requests ----------------------------------------------------------------------


def request_body(
    tools: tuple[ToolSpec, ...] = (),
    history: list[HistoryItem] | None = None,
    **options: Any,
) -> dict[str, Any]:
    messages: list[HistoryItem] = history or [Message("user", "Где заказ ORD-123456?")]
    request = adapter.build_request(
        "claude-sonnet-4-5", messages, tools, RequestSettings(**options)
    )
    return request.body


def test_request_basics(contract: Contract) -> None:
    request = adapter.build_request(
        "claude-sonnet-4-5",
        [Message("system", "Ты диспетчер доставки."), Message("user", "Привет")],
        contract.tools,
        RequestSettings(),
    )
    assert (request.method, request.path, request.stream) == ("POST", "/v1/messages", False)
    assert request.headers == {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
    }
    assert request.body["model"] == "claude-sonnet-4-5"
    assert request.body["system"] == "Ты диспетчер доставки."
    assert request.body["messages"] == [{"role": "user", "content": "Привет"}]
    assert request.body["max_tokens"] == 1024
    assert "temperature" not in request.body and "stream" not in request.body
    assert request.body["tools"][0] == {
        "name": "get_order",
        "description": contract.tools[0].description,
        "input_schema": contract.tools[0].parameters,
    }


def test_request_settings_that_are_set_are_sent() -> None:
    request = adapter.build_request(
        "m",
        [Message("user", "hi")],
        (),
        RequestSettings(temperature=0.0, max_output_tokens=500, stream=True),
    )
    assert (request.body["temperature"], request.body["max_tokens"]) == (0.0, 500)
    assert request.body["stream"] is True and request.stream is True
    assert request.path == "/v1/messages"


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        (ToolChoice("auto"), None, {"type": "auto"}),
        (ToolChoice("auto"), False, {"type": "auto", "disable_parallel_tool_use": True}),
        (ToolChoice("auto"), True, {"type": "auto", "disable_parallel_tool_use": False}),
        (ToolChoice("required"), None, {"type": "any"}),
        (ToolChoice("required"), False, {"type": "any", "disable_parallel_tool_use": True}),
        (ToolChoice("forced", "cancel_order"), None, {"type": "tool", "name": "cancel_order"}),
        (
            ToolChoice("forced", "get_order"),
            False,
            {"type": "tool", "name": "get_order", "disable_parallel_tool_use": True},
        ),
        (ToolChoice("none"), None, {"type": "none"}),
        (ToolChoice("none"), False, {"type": "none"}),
    ],
)
def test_tool_choice_and_parallel_policy(
    contract: Contract, choice: ToolChoice, parallel: bool | None, expected: dict[str, Any]
) -> None:
    body = request_body(contract.tools, tool_choice=choice, parallel_tool_calls=parallel)
    assert body["tool_choice"] == expected
    assert [tool["name"] for tool in body["tools"]] == list(contract.names)
    view = adapter.read_request(body, "/v1/messages")
    assert view.tool_choice == choice
    assert view.parallel_tool_calls == (None if choice.mode == "none" else parallel)
    assert view.tool_names == contract.names


@pytest.mark.parametrize("parallel", [None, False])
def test_no_tools_mode_sends_no_tool_keys(contract: Contract, parallel: bool | None) -> None:
    body = request_body(
        contract.tools, tool_choice=ToolChoice("no_tools"), parallel_tool_calls=parallel
    )
    assert "tools" not in body and "tool_choice" not in body
    view = adapter.read_request(body, "/v1/messages")
    assert (view.tool_choice, view.parallel_tool_calls, view.tool_names) == (
        ToolChoice("no_tools"),
        None,
        (),
    )


def test_an_empty_tool_list_sends_no_tool_choice() -> None:
    body = request_body((), tool_choice=ToolChoice("required"))
    assert "tools" not in body and "tool_choice" not in body


def test_tools_are_sent_in_the_order_given(contract: Contract) -> None:
    reversed_tools = tuple(reversed(contract.tools))
    body = request_body(reversed_tools)
    assert [tool["name"] for tool in body["tools"]] == [tool.name for tool in reversed_tools]


def test_forced_mode_needs_a_tool_name(contract: Contract) -> None:
    with pytest.raises(ValueError, match="forced"):
        request_body(contract.tools, tool_choice=ToolChoice("forced"))


def test_a_system_message_after_the_conversation_started_is_refused() -> None:
    with pytest.raises(ValueError, match="system"):
        request_body(history=[Message("user", "a"), Message("system", "late")])


def test_read_request_sees_user_text_and_tool_result_turns() -> None:
    first = parsed("parallel_calls")
    history = adapter.append_tool_result(
        [Message("system", "s"), Message("user", "Где заказ ORD-100001?")],
        first,
        [
            ToolResult("toolu_01", "get_order", {"status": "in_transit"}),
            ToolResult("toolu_02", "quote_delivery", {"price": 450}),
        ],
    )
    body = request_body(history=history, stream=True)
    view = adapter.read_request(body, "/v1/messages")
    assert view.model == "claude-sonnet-4-5"
    assert view.last_user_text == "Где заказ ORD-100001?"
    assert view.tool_result_turns == 1
    assert view.stream is True
    assert adapter.read_request(["not", "a", "body"], "/v1/messages").model is None


def test_read_request_takes_text_blocks_as_user_text() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }
    assert adapter.read_request(body, "/v1/messages").last_user_text == "hi"


# --- sent_tools and the strict transform ---------------------------------------------


def canonical_tools(tools: tuple[ToolSpec, ...]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(tool.name, tool.description, tool.parameters) for tool in tools]


@pytest.mark.parametrize(
    "choice",
    [
        ToolChoice("auto"),
        ToolChoice("required"),
        ToolChoice("forced", "get_order"),
        ToolChoice("none"),
    ],
)
def test_sent_tools_give_back_the_contract(contract: Contract, choice: ToolChoice) -> None:
    body = request_body(contract.tools, tool_choice=choice, parallel_tool_calls=False)
    sent = adapter.sent_tools(body)
    assert canonical_tools(tuple(sent)) == canonical_tools(contract.tools)
    assert {tool.effect for tool in sent} == {"read"}


def test_sent_tools_skip_server_tools_and_odd_entries(contract: Contract) -> None:
    body = request_body(contract.tools)
    # A new list: the built one is shared by every request that declares these tools.
    body["tools"] = [
        *body["tools"],
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
        {"name": "no_schema"},
        "junk",
    ]
    assert [tool.name for tool in adapter.sent_tools(body)] == list(contract.names)
    assert adapter.sent_tools({"tools": "x"}) == []
    assert adapter.sent_tools(None) == []


def test_strict_tools_carry_the_documented_lossy_transform(contract: Contract) -> None:
    body = request_body(contract.tools, strict=True)
    assert all(tool["strict"] is True for tool in body["tools"])
    sent = adapter.sent_tools(body)
    assert [tool.parameters for tool in sent] == [
        adapter.wire_schema(tool.parameters, True) for tool in contract.tools
    ]
    # The documented difference: unsupported constraints move into descriptions.
    order_id = sent[0].parameters["properties"]["order_id"]
    assert "pattern" not in order_id
    assert order_id["description"].endswith("\n\n{pattern: ^ORD-[0-9]{6}$}")
    weight = sent[1].parameters["properties"]["weight_kg"]
    assert weight == {"type": "number", "description": "{exclusiveMinimum: 0, maximum: 1000}"}
    assert sent[1].parameters["properties"]["service"] == {"enum": ["standard", "express"]}
    assert canonical_tools(tuple(sent)) != canonical_tools(contract.tools)


NASTY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Nested object, optional field, enum, $ref, numeric bounds, pattern.",
    "$defs": {
        "Address": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1, "maxLength": 80},
                "zip": {"type": "string", "pattern": "^[0-9]{6}$"},
            },
            "required": ["city"],
        }
    },
    "properties": {
        "to": {"$ref": "#/$defs/Address", "description": "dropped next to $ref"},
        "count": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 1},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 5},
        "flags": {"type": "array", "items": {"type": "boolean"}, "minItems": 1},
        "when": {"type": "string", "format": "date-time"},
        "site": {"type": "string", "format": "iri"},
        "mode": {"oneOf": [{"type": "string"}, {"type": "null"}]},
        "level": {"type": "string", "enum": ["low", "high"], "default": "low"},
        "fixed": {"const": 3},
        "extra": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["to", "count"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("name", ["get_order", "quote_delivery", "cancel_order", "nasty"])
def test_strict_transform_matches_the_official_sdk(contract: Contract, name: str) -> None:
    sdk = pytest.importorskip("anthropic")
    tool = contract.get(name)
    schema = tool.parameters if tool is not None else NASTY_SCHEMA
    assert adapter.wire_schema(schema, True) == sdk.transform_schema(schema)


def test_strict_transform_details_and_purity() -> None:
    before = json.dumps(NASTY_SCHEMA, sort_keys=True)
    strict = adapter.wire_schema(NASTY_SCHEMA, True)
    assert json.dumps(NASTY_SCHEMA, sort_keys=True) == before
    props = strict["properties"]
    assert props["count"] == {
        "type": "integer",
        "description": "{minimum: 1, maximum: 10, multipleOf: 1}",
    }
    # minItems goes back in after the keys left over, as the SDK does it.
    assert props["tags"]["description"] == "{maxItems: 5, minItems: 2}"
    assert props["flags"]["minItems"] == 1
    assert props["mode"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert props["extra"]["additionalProperties"] is False
    assert strict["$defs"]["Address"]["additionalProperties"] is False
    plain = adapter.wire_schema(NASTY_SCHEMA, False)
    assert plain == NASTY_SCHEMA and plain is not NASTY_SCHEMA


def test_strict_transform_keeps_nodes_the_sdk_would_reject() -> None:
    schema = {
        "type": "object",
        "properties": {
            "anything": {"description": "no type"},
            "yes": True,
            "maybe": {"type": ["object", "null"], "properties": {"a": {"type": "string"}}},
        },
    }
    strict = adapter.wire_schema(schema, True)
    assert strict["properties"]["anything"] == {"description": "no type"}
    assert strict["properties"]["yes"] is True
    assert strict["properties"]["maybe"]["type"] == ["object", "null"]
    assert strict["properties"]["maybe"]["additionalProperties"] is False


# --- append_tool_result ----------------------------------------------------------------


def test_one_result_follows_the_verbatim_assistant_turn() -> None:
    decision = parsed("one_call")
    history: list[HistoryItem] = [Message("user", "Где заказ ORD-123456?")]
    result = ToolResult("toolu_01A09q90qw90lq917835lq9", "get_order", {"status": "delivered"})
    new = adapter.append_tool_result(history, decision, [result])
    assert history == [Message("user", "Где заказ ORD-123456?")]
    assert new[0] == history[0]
    assert new[1] == WireItem(decision.assistant_turn)
    assert isinstance(new[1], WireItem) and new[1].payload is decision.assistant_turn
    assert new[2] == WireItem(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                    "content": result_text({"status": "delivered"}),
                }
            ],
        }
    )
    assert len(new) == 3


def test_parallel_results_go_in_one_user_message_in_call_order_with_errors_flagged() -> None:
    decision = parsed("parallel_calls")
    results = [
        ToolResult("toolu_02", "quote_delivery", {"error": "NO_ROUTE"}, is_error=True),
        ToolResult("toolu_01", "get_order", {"status": "in_transit"}),
    ]
    new = adapter.append_tool_result([], decision, results)
    assert len(new) == 2
    user = new[1]
    assert isinstance(user, WireItem)
    assert user.payload == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01",
                "content": result_text({"status": "in_transit"}),
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_02",
                "content": result_text({"error": "NO_ROUTE"}),
                "is_error": True,
            },
        ],
    }
    body = request_body(history=[Message("user", "q"), *new])
    assert [item["role"] for item in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1] == decision.assistant_turn


def test_thinking_turns_are_replayed_with_their_signatures() -> None:
    decision = streamed("stream_thinking")
    new = adapter.append_tool_result(
        [], decision, [ToolResult("toolu_01ThInk", "cancel_order", {"ok": True})]
    )
    assert new[0] == WireItem({"role": "assistant", "content": body_of("thinking_call")["content"]})


def test_a_result_without_call_id_takes_the_id_of_the_unanswered_call_of_its_tool() -> None:
    decision = Decision(
        kind="tool_call",
        calls=(
            ToolCall("toolu_a", "get_order", {"order_id": "ORD-1"}, {"order_id": "ORD-1"}),
            ToolCall("toolu_b", "get_order", {"order_id": "ORD-2"}, {"order_id": "ORD-2"}),
        ),
        finish_reason="tool_use",
        stop="tool_call",
    )
    results = [
        ToolResult("toolu_a", "get_order", {"n": 1}),
        ToolResult(None, "get_order", {"n": 2}),
    ]
    new = adapter.append_tool_result([], decision, results)
    assert isinstance(new[0], WireItem) and isinstance(new[1], WireItem)
    blocks = new[1].payload["content"]
    assert [block["tool_use_id"] for block in blocks] == ["toolu_a", "toolu_b"]
    # Without a recorded assistant turn the turn is rebuilt from the decision.
    assert new[0].payload == {
        "role": "assistant",
        "content": [
            tool_use("toolu_a", "get_order", {"order_id": "ORD-1"}),
            tool_use("toolu_b", "get_order", {"order_id": "ORD-2"}),
        ],
    }
    with pytest.raises(ValueError, match="no call id"):
        adapter.append_tool_result([], decision, [ToolResult(None, "cancel_order", {})])


def test_no_results_appends_only_the_assistant_turn() -> None:
    decision = parsed("server_tool")
    assert adapter.append_tool_result([], decision, []) == [WireItem(decision.assistant_turn)]


# --- render_response -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["text", "one_call", "parallel_calls", "refusal", "truncated_call"]
)
@pytest.mark.parametrize("stream", [False, True])
def test_rendering_a_fixture_decision_parses_back_equal(name: str, stream: bool) -> None:
    decision = parsed(name)
    wire = adapter.render_response(decision, stream=stream)
    assert wire.status == 200
    again = (
        adapter.parse_stream(200, wire.events or ())
        if stream
        else adapter.parse_decision(200, wire.body)
    )
    assert again == decision
    assert isinstance(again, Decision) and again.model == "claude-sonnet-4-5"


def test_rendered_streams_look_like_the_api() -> None:
    arguments = {"origin": "Москва", "destination": "Санкт-Петербург", "weight_kg": 12}
    decision = Decision(
        kind="tool_call",
        text="Считаю.",
        calls=(ToolCall("toolu_1", "quote_delivery", arguments, arguments),),
        finish_reason="tool_use",
        stop="tool_call",
    )
    events = adapter.render_response(decision, stream=True).events or ()
    names = [event.event for event in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert "ping" in names
    fragments = [
        event.data["delta"]["partial_json"]
        for event in events
        if event.event == "content_block_delta"
        and event.data["delta"]["type"] == "input_json_delta"
    ]
    assert fragments[0] == "" and len(fragments) > 3
    assert json.loads("".join(fragments)) == arguments
    assert all(event.data["type"] == event.event for event in events)


@pytest.mark.parametrize(
    ("kind", "finish_reason"),
    [
        ("tool_call", "tool_use"),
        ("text", "end_turn"),
        ("refusal", "refusal"),
        ("invalid", "max_tokens"),
    ],
)
def test_a_missing_finish_reason_renders_the_natural_one(
    kind: DecisionKind, finish_reason: str
) -> None:
    call = ToolCall("toolu_1", "get_order", {"order_id": "ORD-1"}, {"order_id": "ORD-1"})
    calls = (call,) if kind in ("tool_call", "invalid") else ()
    decision = Decision(kind=kind, text="t", calls=calls)
    wire = adapter.render_response(decision)
    assert wire.body["stop_reason"] == finish_reason
    assert wire.body["model"] == "fcreplay-simulator"
    again = adapter.parse_decision(200, wire.body)
    assert isinstance(again, Decision) and again.kind == kind


# --- round-trip property -----------------------------------------------------------------

KNOWN_STOPS: dict[str, Stop] = {
    "tool_use": "tool_call",
    "end_turn": "end",
    "stop_sequence": "end",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "pause_turn": "pause",
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
argument_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=4)
broken_arguments = st.text(min_size=1, max_size=30).filter(
    lambda raw: decode_arguments(raw) is None
)
tool_names = st.from_regex(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,20}$", fullmatch=True)
call_ids = st.from_regex(r"^toolu_[A-Za-z0-9]{1,24}$", fullmatch=True)


@st.composite
def tool_calls(draw: st.DrawFn) -> ToolCall:
    call_id, name = draw(call_ids), draw(tool_names)
    if draw(st.integers(0, 4)) == 0:
        return ToolCall(call_id, name, None, draw(broken_arguments))
    arguments = draw(argument_objects)
    return ToolCall(call_id, name, arguments, arguments)


@st.composite
def decisions(draw: st.DrawFn) -> Decision:
    text = draw(st.none() | st.text(max_size=60))
    calls = tuple(draw(st.lists(tool_calls(), max_size=3)))
    finish_reason = draw(st.sampled_from([*KNOWN_STOPS, "a_future_reason"]))
    stop = KNOWN_STOPS.get(finish_reason, "other")
    kind: DecisionKind
    if finish_reason == "refusal":
        kind = "refusal"
    elif calls:
        broken = any(call.arguments is None for call in calls)
        kind = "invalid" if broken or stop == "length" else "tool_call"
    else:
        kind = "text"
    model = draw(st.none() | st.sampled_from(["claude-sonnet-4-5", "claude-haiku-4-5"]))
    return Decision(kind, text, calls, finish_reason, stop, model=model)


@settings(max_examples=100, deadline=None)
@given(decisions())
def test_round_trip_of_non_streamed_bodies(decision: Decision) -> None:
    again = adapter.parse_decision(200, adapter.render_response(decision).body)
    assert again == decision
    assert isinstance(again, Decision)
    assert again.model == (decision.model or "fcreplay-simulator")


@settings(max_examples=100, deadline=None)
@given(decisions())
def test_round_trip_of_streams(decision: Decision) -> None:
    wire = adapter.render_response(decision, stream=True)
    again = adapter.parse_stream(wire.status, wire.events or ())
    assert again == decision
    # The stream and its non-streamed twin agree, assistant turn included.
    twin = adapter.parse_decision(200, adapter.render_response(decision).body)
    assert isinstance(again, Decision) and isinstance(twin, Decision)
    assert again.assistant_turn == twin.assistant_turn
