"""Tests of the OpenAI Chat Completions adapter (and the compatible-server dialects it reads).

Every fixture under fixtures/openai_chat/ is synthetic (each says so in its
`_comment`): bodies and streams modelled on the providers reference (§2, §6, §7)
and on the shapes of the real cassettes in ../shared/corpus, with the example
suite's delivery tools. Each fixture carries what it must parse to (`expect`,
`expect_error`, or `twin`: the non-streamed fixture a stream must equal). The
official `openai` SDK is only an oracle for the shape of rendered responses; the
corpus test at the end reads the real recorded exchanges when they are present.
"""

from __future__ import annotations

import csv
import gzip
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from fcreplay.adapters import openai_chat as adapter
from fcreplay.adapters._wire import decode_arguments, encode_arguments, result_text
from fcreplay.adapters.registry import get_adapter
from fcreplay.decision import Decision, ProviderError, ToolCall
from fcreplay.inputs.contract import Contract, ToolSpec
from fcreplay.neutral import (
    HistoryItem,
    Message,
    RequestSettings,
    RequestView,
    StreamEvent,
    ToolChoice,
    ToolResult,
    WireItem,
)

from ..conftest import CORPUS
from .arrived import arrived

FIXTURES = Path(__file__).parent / "fixtures" / "openai_chat"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def events(items: list[dict[str, Any]]) -> list[StreamEvent]:
    return [StreamEvent(item["event"], item["data"]) for item in items]


def parsed(name: str) -> Decision:
    fixture = load(name)
    decision = adapter.parse_decision(fixture["status"], fixture["body"])
    assert isinstance(decision, Decision), decision
    return decision


def streamed(name: str) -> Decision:
    fixture = load(name)
    decision = adapter.parse_stream(fixture["status"], events(fixture["events"]))
    assert isinstance(decision, Decision), decision
    return decision


def fixtures_with(key: str, prefix: str = "") -> list[str]:
    return sorted(
        path.stem
        for path in FIXTURES.glob(f"{prefix}*.json")
        if key in json.loads(path.read_text(encoding="utf-8"))
    )


def chunk(delta: dict[str, Any], finish: str | None = None) -> StreamEvent:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return StreamEvent(None, {"object": "chat.completion.chunk", "choices": [choice]})


DONE = StreamEvent(None, "[DONE]")
ORDER = ToolCall("call_1", "get_order", {"order_id": "ORD-123456"}, '{"order_id":"ORD-123456"}')


# --- module surface ------------------------------------------------------------------


def test_registry_returns_this_module_with_its_constants() -> None:
    assert get_adapter("openai_chat") is adapter
    assert adapter.NAME == "openai_chat"
    assert adapter.DEFAULT_BASE_URL == "https://api.openai.com/v1"
    assert (adapter.API_KEY_HEADER, adapter.API_KEY_PREFIX) == ("authorization", "Bearer ")
    assert adapter.VERSION


# --- parse_decision --------------------------------------------------------------------


@pytest.mark.parametrize("name", fixtures_with("body"))
def test_body_fixture_parses_to_its_expected_decision(name: str) -> None:
    fixture = load(name)
    decision = adapter.parse_decision(fixture["status"], fixture["body"])
    assert decision == Decision.from_json(fixture["expect"])
    assert decision.model == fixture["expect"]["model"]
    assert decision.raw_response is fixture["body"]
    assert decision.assistant_turn is fixture["body"]["choices"][0]["message"]


def test_reasoning_fields_are_not_text_but_stay_in_the_assistant_turn() -> None:
    vllm = parsed("compat_vllm_reasoning")
    assert vllm.text is None
    assert vllm.assistant_turn["reasoning"].startswith("Пользователь")
    deepseek = streamed("stream_reasoning_content")
    assert deepseek.text == "Уточните, пожалуйста, номер заказа в формате ORD-123456."
    assert deepseek.assistant_turn["reasoning_content"] == (
        "Номера заказа нет, значит нужно спросить."
    )


@pytest.mark.parametrize(
    ("arguments", "raw"),
    [
        pytest.param([1, 2], "[1, 2]", id="list"),
        pytest.param(7, "7", id="number"),
        pytest.param('"ORD-123456"', '"ORD-123456"', id="json-string"),
    ],
)
def test_arguments_that_are_no_object_make_the_turn_invalid(arguments: Any, raw: str) -> None:
    call: dict[str, Any] = {"id": "call_1", "type": "function", "function": {"name": "get_order"}}
    call["function"]["arguments"] = arguments
    body = {"choices": [{"message": {"role": "assistant", "tool_calls": [call]}}]}
    decision = adapter.parse_decision(200, body)
    assert isinstance(decision, Decision)
    assert decision.kind == "invalid"
    assert decision.calls == (ToolCall("call_1", "get_order", None, raw),)


def test_finish_reason_tool_calls_without_any_call_is_invalid() -> None:
    body = {
        "choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "tool"}]
    }
    decision = adapter.parse_decision(200, body)
    assert decision == Decision(kind="invalid", finish_reason="tool", stop="tool_call")


def test_unknown_finish_reason_is_kept_raw_and_mapped_to_other() -> None:
    body = {"choices": [{"message": {"content": "Готово"}, "finish_reason": "eos_token"}]}
    decision = adapter.parse_decision(200, body)
    assert decision == Decision(kind="text", text="Готово", finish_reason="eos_token", stop="other")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=25,
)
"""Arbitrary JSON, biased towards the keys a response has so the parser goes deep."""
KEYS = st.sampled_from(
    ["choices", "message", "delta", "tool_calls", "function", "arguments", "name", "id",
     "index", "content", "refusal", "finish_reason", "error", "object", "detail", "type"]
)  # fmt: skip
SHAPED = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "x", "{}", "stop"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=100)
@given(body=JSON | SHAPED)
def test_parse_decision_never_raises_on_json_of_any_shape(body: Any) -> None:
    assert isinstance(adapter.parse_decision(200, body), Decision | ProviderError)
    assert isinstance(adapter.parse_decision(500, body), ProviderError)


@settings(max_examples=100)
@given(data=st.lists(st.tuples(st.none() | st.just("error"), JSON | SHAPED), max_size=6))
def test_parse_stream_never_raises_on_events_of_any_shape(data: list[tuple[Any, Any]]) -> None:
    stream = [StreamEvent(event, item) for event, item in data]
    assert isinstance(adapter.parse_stream(200, stream), Decision | ProviderError)


# --- errors ----------------------------------------------------------------------------

ERROR_CASES = load("errors")["cases"]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[case["name"] for case in ERROR_CASES])
def test_error_bodies_are_classified(case: dict[str, Any]) -> None:
    error = adapter.parse_decision(case["status"], case["body"])
    assert isinstance(error, ProviderError)
    expected = case["expect"]
    fields = {key: value for key, value in error.to_json().items() if key in expected}
    assert fields == {key: expected[key] for key in fields}
    assert set(expected) <= set(error.to_json())
    assert error.message
    assert error.raw is case["body"]


def test_rate_limit_is_retryable_but_an_exhausted_quota_is_not() -> None:
    by_name = {case["name"]: case for case in ERROR_CASES}
    rate = adapter.parse_decision(429, by_name["rate_limit"]["body"])
    quota = adapter.parse_decision(429, by_name["quota"]["body"])
    assert isinstance(rate, ProviderError) and isinstance(quota, ProviderError)
    assert rate.retryable is True
    assert rate.retry_after == pytest.approx(0.644)
    assert (quota.retryable, quota.retry_after) == (False, None)


def test_an_overlong_text_body_is_cut_in_the_message_and_kept_whole_in_raw() -> None:
    page = "<html>" + "x" * 5000 + "</html>"
    error = adapter.parse_decision(502, page)
    assert isinstance(error, ProviderError)
    assert len(error.message) == 2000
    assert error.raw == page


@pytest.mark.parametrize("name", fixtures_with("expect_error"))
def test_in_stream_errors_become_provider_errors(name: str) -> None:
    fixture = load(name)
    error = adapter.parse_stream(fixture["status"], events(fixture["events"]))
    assert isinstance(error, ProviderError)
    expected = fixture["expect_error"]
    assert {key: error.to_json()[key] for key in expected} == expected


def test_a_stream_refused_before_it_started_is_an_error() -> None:
    body = {"error": {"message": "Invalid 'tools'", "type": "invalid_request_error", "code": None}}
    error = adapter.parse_stream(400, [StreamEvent(None, body)])
    assert isinstance(error, ProviderError)
    assert (error.status, error.message, error.retryable) == (400, "Invalid 'tools'", False)


# --- parse_stream ----------------------------------------------------------------------


@pytest.mark.parametrize("name", fixtures_with("twin", "stream_"))
def test_stream_gives_the_decision_of_its_non_streamed_twin(name: str) -> None:
    fixture = load(name)
    decision = streamed(name)
    twin = parsed(fixture["twin"])
    assert decision == twin
    assert decision.model == twin.model
    assert decision.raw_response == fixture["events"]


@pytest.mark.parametrize("name", fixtures_with("expect", "stream_"))
def test_stream_fixture_parses_to_its_expected_decision(name: str) -> None:
    fixture = load(name)
    if fixture["expect"]["finish_reason"] is None and fixture["expect"]["stop"] == "other":
        # A stream cut before its end: a failure to answer, keeping what had arrived.
        decision = arrived(adapter.parse_stream(fixture["status"], events(fixture["events"])))
    else:
        decision = streamed(name)
    assert decision == Decision.from_json(fixture["expect"])
    assert decision.model == fixture["expect"]["model"]


def test_streamed_assistant_turn_has_the_shape_of_the_non_streamed_message() -> None:
    turn = streamed("stream_parallel_calls").assistant_turn
    message = parsed("parallel_calls").assistant_turn
    assert turn == {key: message[key] for key in ("role", "content", "tool_calls")}


def test_a_text_stream_cut_short_is_a_failure_keeping_its_text() -> None:
    stream = [chunk({"role": "assistant", "content": ""}), chunk({"content": "Уточните"})]
    decision = arrived(adapter.parse_stream(200, stream))
    assert decision == Decision(kind="invalid", text="Уточните", finish_reason=None, stop="other")


@pytest.mark.parametrize("content", ["Уточните", "", None, 7, ["part"], {"text": "x"}], ids=repr)
def test_a_delta_of_content_alone_reads_as_in_a_delta_with_other_fields(content: Any) -> None:
    # A delta holding only `content` is read by a short path; one with any other field
    # (here one no reader knows) by the reading of every field: both give one turn.
    opening = chunk({"role": "assistant", "content": ""})
    ending = chunk({}, "stop")
    alone = [opening, chunk({"content": content}), chunk({"content": "."}), ending, DONE]
    beside = [
        opening,
        chunk({"content": content, "x_note": 1}),
        chunk({"x_note": 2, "content": "."}),
        ending,
        DONE,
    ]
    assert adapter.parse_stream(200, alone) == adapter.parse_stream(200, beside)


@pytest.mark.parametrize(
    "data",
    [
        {"error": {"message": "boom"}},
        {"object": "error", "message": "boom"},
        {"detail": "boom"},
    ],
)
def test_an_error_chunk_after_text_is_the_answer(data: dict[str, Any]) -> None:
    stream = [chunk({"content": "Уточните"}), StreamEvent(None, data), DONE]
    result = adapter.parse_stream(200, stream)
    assert isinstance(result, ProviderError)
    assert result.message == "boom"


def test_a_detail_beside_choices_is_no_error() -> None:
    data = {"object": "chat.completion.chunk", "detail": "x", "choices": []}
    stream = [chunk({"content": "Hi"}), StreamEvent(None, data), chunk({}, "stop"), DONE]
    decision = adapter.parse_stream(200, stream)
    assert isinstance(decision, Decision)
    assert decision.text == "Hi"


def test_done_without_a_finish_reason_is_a_complete_turn() -> None:
    # Shaped like the OpenRouter/Novita stream in the corpus: the name repeated whole in
    # every fragment, no finish_reason anywhere, then [DONE].
    first = {"index": 0, "id": "0", "type": "function"}
    stream = [
        chunk({"tool_calls": [{**first, "function": {"name": "get_order", "arguments": ""}}]}),
        chunk({"tool_calls": [{**first, "function": {"name": "get_order", "arguments": "{}"}}]}),
        DONE,
    ]
    decision = adapter.parse_stream(200, stream)
    assert decision == Decision(
        kind="tool_call", calls=(ToolCall("0", "get_order", {}, "{}"),), stop="tool_call"
    )


def test_a_name_split_over_fragments_is_joined() -> None:
    stream = [
        chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "get_"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "order", "arguments": "{}"}}]}),
        chunk({}, "tool_calls"),
        DONE,
    ]
    decision = adapter.parse_stream(200, stream)
    assert isinstance(decision, Decision)
    assert [call.name for call in decision.calls] == ["get_order"]


def test_only_the_first_choice_is_read() -> None:
    other = {"index": 1, "delta": {"content": "второй вариант"}, "finish_reason": "stop"}
    first = {"index": 0, "delta": {"content": "первый"}, "finish_reason": "stop"}
    stream = [StreamEvent(None, {"choices": [other, first]}), DONE]
    decision = adapter.parse_stream(200, stream)
    assert isinstance(decision, Decision)
    assert decision.text == "первый"


# --- build_request ---------------------------------------------------------------------

MESSAGES = [Message("system", "Ты маршрутизатор."), Message("user", "Где заказ ORD-123456?")]


def build(contract: Contract, **settings: Any) -> dict[str, Any]:
    request = adapter.build_request(
        "gpt-4o-2024-08-06", MESSAGES, contract.tools, RequestSettings(**settings)
    )
    return request.body


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        pytest.param(ToolChoice("auto"), "auto", id="auto"),
        pytest.param(ToolChoice("required"), "required", id="required"),
        pytest.param(ToolChoice("none"), "none", id="none"),
        pytest.param(
            ToolChoice("forced", "quote_delivery"),
            {"type": "function", "function": {"name": "quote_delivery"}},
            id="forced",
        ),
    ],
)
def test_request_declares_tools_in_order_with_the_tool_choice(
    contract: Contract, choice: ToolChoice, wire: Any
) -> None:
    body = build(contract, tool_choice=choice, parallel_tool_calls=False)
    assert body["tool_choice"] == wire
    assert body["parallel_tool_calls"] is False
    assert [tool["function"]["name"] for tool in body["tools"]] == list(contract.names)
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": contract.tools[0].description,
            "parameters": contract.tools[0].parameters,
        },
    }


def test_no_tools_mode_sends_no_tool_keys_at_all(contract: Contract) -> None:
    body = build(contract, tool_choice=ToolChoice("no_tools"), parallel_tool_calls=False)
    assert body == {
        "model": "gpt-4o-2024-08-06",
        "messages": [
            {"role": "system", "content": "Ты маршрутизатор."},
            {"role": "user", "content": "Где заказ ORD-123456?"},
        ],
    }


def test_an_empty_tool_list_sends_no_tool_keys() -> None:
    request = adapter.build_request("m", MESSAGES, [], RequestSettings(parallel_tool_calls=True))
    assert set(request.body) == {"model", "messages"}


@pytest.mark.parametrize("parallel", [None, True, False])
def test_parallel_policy_is_sent_only_when_chosen(contract: Contract, parallel: Any) -> None:
    body = build(contract, parallel_tool_calls=parallel)
    assert body.get("parallel_tool_calls", "omitted") == (
        "omitted" if parallel is None else parallel
    )


def test_sampling_settings_and_stream_form(contract: Contract) -> None:
    request = adapter.build_request(
        "gpt-4o",
        MESSAGES,
        contract.tools,
        RequestSettings(temperature=0, max_output_tokens=500, stream=True),
    )
    assert (request.method, request.path, request.stream) == ("POST", "/chat/completions", True)
    assert request.headers == {"content-type": "application/json"}
    assert request.body["temperature"] == 0
    assert request.body["max_completion_tokens"] == 500
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    plain = build(contract)
    assert not {"temperature", "max_completion_tokens", "stream", "stream_options"} & set(plain)


def test_history_items_are_sent_verbatim_in_order() -> None:
    assistant: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": []}
    results = [{"role": "tool", "tool_call_id": "a", "content": "{}"}] * 2
    history: list[HistoryItem] = [*MESSAGES, WireItem(assistant), WireItem(results)]
    body = adapter.build_request("m", history, [], RequestSettings()).body
    assert body["messages"][2:] == [assistant, *results]


def test_forced_choice_without_a_tool_name_is_refused(contract: Contract) -> None:
    with pytest.raises(ValueError, match="forced"):
        build(contract, tool_choice=ToolChoice("forced"))


def test_strict_requests_mark_every_function_and_send_the_transformed_schema(
    contract: Contract,
) -> None:
    body = build(contract, strict=True)
    for tool, sent in zip(contract.tools, body["tools"], strict=True):
        assert sent["function"]["strict"] is True
        assert sent["function"]["parameters"] == adapter.wire_schema(tool.parameters, True)
    assert all("strict" not in tool["function"] for tool in build(contract)["tools"])


# --- wire_schema -----------------------------------------------------------------------

NASTY = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
        "note": {"type": "string", "maxLength": 200},
        "service": {"type": "string", "enum": ["standard", "express"]},
        "address": {"$ref": "#/$defs/address"},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"sku": {"type": "string"}}},
        },
        "weight_kg": {"type": ["number", "null"], "minimum": 0},
    },
    "required": ["order_id"],
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
            "required": ["city"],
        }
    },
}


def test_strict_transform_closes_objects_requires_everything_and_nulls_the_optional() -> None:
    assert adapter.wire_schema(NASTY, True) == {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
            "note": {"type": ["string", "null"], "maxLength": 200},
            "service": {"anyOf": [{"type": "string", "enum": ["standard", "express"]},
                                  {"type": "null"}]},
            "address": {"anyOf": [{"$ref": "#/$defs/address"}, {"type": "null"}]},
            "items": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "properties": {"sku": {"type": ["string", "null"]}},
                    "required": ["sku"],
                    "additionalProperties": False,
                },
            },
            "weight_kg": {"type": ["number", "null"], "minimum": 0},
        },
        "required": ["order_id", "note", "service", "address", "items", "weight_kg"],
        "additionalProperties": False,
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "zip": {"type": ["string", "null"]}},
                "required": ["city", "zip"],
                "additionalProperties": False,
            }
        },
    }  # fmt: skip


def test_strict_transform_leaves_its_input_alone_and_non_strict_sends_an_equal_copy() -> None:
    before = json.dumps(NASTY, sort_keys=True)
    adapter.wire_schema(NASTY, True)
    unchanged = adapter.wire_schema(NASTY, False)
    assert json.dumps(NASTY, sort_keys=True) == before
    assert unchanged == NASTY and unchanged is not NASTY


def test_strict_transform_gives_a_no_argument_tool_an_empty_closed_object() -> None:
    assert adapter.wire_schema({"type": "object"}, True) == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


# --- sent_tools / read_request ---------------------------------------------------------


def as_read(tools: tuple[ToolSpec, ...]) -> list[ToolSpec]:
    """The contract as the wire can carry it: effect is not sent, so it reads back "read"."""
    return [replace(tool, effect="read") for tool in tools]


@pytest.mark.parametrize(
    "choice",
    [ToolChoice("auto"), ToolChoice("required"), ToolChoice("none"), ToolChoice("forced", "x")],
    ids=lambda choice: choice.mode,
)
@pytest.mark.parametrize("strict", [False, True], ids=["plain", "strict"])
def test_sent_tools_read_back_the_contract(
    contract: Contract, choice: ToolChoice, strict: bool
) -> None:
    # The delivery contract already has every property required and every object closed,
    # so the strict transform is the identity for it and both forms read back unchanged.
    body = build(contract, tool_choice=choice, strict=strict)
    assert adapter.sent_tools(body) == as_read(contract.tools)


def test_sent_tools_show_the_documented_strict_difference() -> None:
    tool = ToolSpec("annotate", "Добавить заметку.", NASTY)
    body = adapter.build_request("m", [], [tool], RequestSettings(strict=True)).body
    assert adapter.sent_tools(body) == [replace(tool, parameters=adapter.wire_schema(NASTY, True))]
    assert adapter.sent_tools(body) != [tool]


def test_sent_tools_ignore_custom_tools_and_read_deprecated_functions() -> None:
    body = {
        "tools": [
            {"type": "custom", "custom": {"name": "sql"}},
            {"type": "function", "function": {"name": "get_order"}},
        ],
        "functions": [{"name": "cancel_order", "description": "Отмена", "parameters": {}}],
    }
    assert adapter.sent_tools(body) == [
        ToolSpec("get_order", "", {"type": "object", "properties": {}}),
        ToolSpec("cancel_order", "Отмена", {}),
    ]
    assert adapter.sent_tools({"tools": "x"}) == adapter.sent_tools(None) == []


@pytest.mark.parametrize(
    "choice",
    [
        ToolChoice("auto"),
        ToolChoice("required"),
        ToolChoice("none"),
        ToolChoice("forced", "cancel_order"),
        ToolChoice("no_tools"),
    ],
    ids=lambda choice: choice.mode,
)
@pytest.mark.parametrize("parallel", [None, False])
def test_read_request_is_the_inverse_of_build_request(
    contract: Contract, choice: ToolChoice, parallel: bool | None
) -> None:
    request = adapter.build_request(
        "gpt-4o",
        MESSAGES,
        contract.tools,
        RequestSettings(tool_choice=choice, parallel_tool_calls=parallel, stream=True),
    )
    tools = () if choice.mode == "no_tools" else contract.names
    assert adapter.read_request(request.body, request.path) == RequestView(
        model="gpt-4o",
        last_user_text="Где заказ ORD-123456?",
        tool_result_turns=0,
        tool_names=tools,
        tool_choice=choice,
        parallel_tool_calls=None if choice.mode == "no_tools" else parallel,
        stream=True,
    )


def test_read_request_counts_tool_result_turns_and_skips_them_as_user_text() -> None:
    first = parsed("parallel_calls")
    history = adapter.append_tool_result(
        MESSAGES,
        first,
        [ToolResult(call.call_id, call.name, {"ok": True}) for call in first.calls],
    )
    second = parsed("one_call")
    history = adapter.append_tool_result(
        history, second, [ToolResult(second.calls[0].call_id, "get_order", {"ok": True})]
    )
    body = adapter.build_request("m", history, [], RequestSettings()).body
    view = adapter.read_request(body, "/chat/completions")
    assert (view.tool_result_turns, view.last_user_text) == (2, "Где заказ ORD-123456?")
    assert view.tool_choice == ToolChoice("no_tools")


def test_read_request_accepts_mistral_any_and_content_parts() -> None:
    body = {
        "tools": [{"type": "function", "function": {"name": "get_order"}}],
        "tool_choice": "any",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Где заказ?"}]}],
    }
    view = adapter.read_request(body, "/chat/completions")
    assert (view.tool_choice, view.last_user_text) == (ToolChoice("required"), "Где заказ?")


# --- append_tool_result ----------------------------------------------------------------


def test_one_result_follows_the_verbatim_assistant_turn() -> None:
    decision = parsed("one_call")
    content = {"ok": True, "status": "in_transit", "city": "Самара"}
    history = adapter.append_tool_result(
        MESSAGES, decision, [ToolResult(decision.calls[0].call_id, "get_order", content)]
    )
    assert history[:2] == MESSAGES
    assert history[2] == WireItem(decision.assistant_turn)
    assert history[2].payload is decision.assistant_turn
    assert history[3:] == [
        WireItem(
            {
                "role": "tool",
                "tool_call_id": "call_JMW1whyEaYG438VE1OIflxA2",
                "content": result_text(content),
            }
        )
    ]


def test_parallel_results_come_in_call_order_with_the_error_inside_the_content() -> None:
    decision = parsed("parallel_calls")
    first, second = decision.calls
    failure = {"ok": False, "error": {"code": "ROUTE_UNAVAILABLE", "message": "Недоступен"}}
    results = [
        ToolResult(second.call_id, second.name, failure, is_error=True),
        ToolResult(first.call_id, first.name, {"ok": True, "status": "in_transit"}),
    ]
    history = adapter.append_tool_result([], decision, results)
    assert [item.payload for item in history[1:]] == [  # type: ignore[union-attr]
        {"role": "tool", "tool_call_id": first.call_id, "content": result_text(results[1].content)},
        {"role": "tool", "tool_call_id": second.call_id, "content": result_text(failure)},
    ]


def test_calls_without_an_id_get_position_ids_in_the_turn_and_the_result() -> None:
    decision = parsed("compat_empty_id")
    original = json.dumps(decision.assistant_turn, sort_keys=True)
    history = adapter.append_tool_result(
        [], decision, [ToolResult(None, "get_order", {"ok": True})]
    )
    turn, result = (item.payload for item in history)  # type: ignore[union-attr]
    assert turn["tool_calls"][0]["id"] == result["tool_call_id"] == "call00000"
    assert json.dumps(decision.assistant_turn, sort_keys=True) == original


def test_position_ids_fill_only_the_calls_that_lack_one() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"type": "function", "function": {"name": "get_order", "arguments": "{}"}},
            {"id": "D681PevKs", "type": "function", "function": {"name": "x", "arguments": "{}"}},
        ],
    }
    decision = adapter.parse_decision(200, {"choices": [{"message": message}]})
    assert isinstance(decision, Decision)
    results = [ToolResult(call.call_id, call.name, {"ok": True}) for call in decision.calls]
    history = adapter.append_tool_result([], decision, results)
    turn = history[0].payload  # type: ignore[union-attr]
    assert [call["id"] for call in turn["tool_calls"]] == ["call00000", "D681PevKs"]
    assert [item.payload["tool_call_id"] for item in history[1:]] == [  # type: ignore[union-attr]
        "call00000",
        "D681PevKs",
    ]


def test_a_result_without_id_and_no_call_left_is_refused() -> None:
    with pytest.raises(ValueError, match="no call id"):
        adapter.append_tool_result([], parsed("one_call"), [ToolResult(None, "x", {})])


def test_a_deprecated_function_call_is_answered_by_a_function_message() -> None:
    decision = parsed("legacy_function_call")
    history = adapter.append_tool_result(
        [], decision, [ToolResult(None, "get_order", {"ok": True})]
    )
    assert [item.payload for item in history] == [  # type: ignore[union-attr]
        decision.assistant_turn,
        {"role": "function", "name": "get_order", "content": result_text({"ok": True})},
    ]


def test_a_decision_without_a_wire_turn_is_replayed_from_its_calls() -> None:
    decision = Decision(kind="tool_call", calls=(ORDER,), stop="tool_call")
    history = adapter.append_tool_result([], decision, [ToolResult("call_1", "get_order", {})])
    assert history[0] == WireItem(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"order_id":"ORD-123456"}'},
                }
            ],
        }
    )


# --- render_response / render_error ----------------------------------------------------

NAMES = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_-]{0,20}", fullmatch=True)
IDS = st.none() | st.from_regex(r"call_[A-Za-z0-9]{1,24}", fullmatch=True)
TEXTS = st.none() | st.text(min_size=1, max_size=40)
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
ARGUMENTS = st.dictionaries(st.text(max_size=10), VALUES, max_size=4)


@st.composite
def good_calls(draw: st.DrawFn, openai_only: bool = False) -> ToolCall:
    """A call with JSON-object arguments; compatible-server forms unless `openai_only`."""
    call_id = draw(IDS.filter(bool) if openai_only else IDS)
    name, arguments = draw(NAMES), draw(ARGUMENTS)
    form = draw(st.sampled_from(["string"] if openai_only else ["string", "object", "absent"]))
    if form == "absent":  # a server that sends no arguments for a no-argument call
        return ToolCall(call_id, name, {}, None)
    if form == "object":  # compatible servers that send an object
        return ToolCall(call_id, name, arguments, arguments)
    raw = encode_arguments(arguments)
    return ToolCall(call_id, name, decode_arguments(raw), raw)


BAD_CALLS = st.builds(
    lambda call_id, name, raw: ToolCall(call_id, name, None, raw),
    IDS.filter(bool),
    NAMES,
    st.sampled_from(['{"order_id":', "not json", "[1, 2]", '"ORD-123456"', '{"a": 1,}']),
)


@st.composite
def decisions(draw: st.DrawFn, openai_only: bool = False) -> Decision:
    """Decisions the format can carry, with the finish_reason/stop pair a server would send.

    `openai_only` keeps to what api.openai.com itself sends (ids always, arguments as
    strings, its own finish reasons), for the SDK oracle.
    """
    calls_of = good_calls(openai_only)
    text = draw(TEXTS)
    scenario = draw(st.sampled_from(["text", "call", "bad", "cut", "refusal", "blocked"]))
    calls: tuple[ToolCall, ...] = ()
    if scenario == "text":
        kind = "text"
        pairs = [("stop", "end"), ("length", "length")] + [("eos", "other")] * (not openai_only)
        pairs += [("content_filter", "content_filter")] * bool(text)
        finish, stop = draw(st.sampled_from(pairs))
    elif scenario == "call":
        kind, calls = "tool_call", tuple(draw(st.lists(calls_of, min_size=1, max_size=3)))
        finishes = ["tool_calls", "stop"] + ["tool"] * (not openai_only)
        finish, stop = draw(st.sampled_from(finishes)), "tool_call"
    elif scenario == "bad":
        good = draw(st.lists(calls_of, max_size=2))
        position = draw(st.integers(0, len(good)))
        calls = (*good[:position], draw(BAD_CALLS), *good[position:])
        kind, finish, stop = "invalid", "tool_calls", "tool_call"
    elif scenario == "cut":
        calls = tuple(draw(st.lists(calls_of | BAD_CALLS, min_size=1, max_size=2)))
        kind, finish, stop = "invalid", "length", "length"
    elif scenario == "refusal":
        kind, finish, stop = "refusal", "stop", "refusal"
    else:
        kind, text, finish, stop = "refusal", None, "content_filter", "content_filter"
    model = draw(st.none() | st.sampled_from(["gpt-4o-2024-08-06", "qwen3:8b"]))
    return Decision(kind, text, calls, finish, stop, model=model)  # type: ignore[arg-type]


@settings(max_examples=100)
@given(decision=decisions())
def test_rendered_bodies_and_streams_parse_back_to_the_decision(decision: Decision) -> None:
    body = adapter.render_response(decision)
    stream = adapter.render_response(decision, stream=True)
    assert body.status == stream.status == 200
    assert body.events is None and stream.events is not None
    from_body = adapter.parse_decision(body.status, body.body)
    from_stream = adapter.parse_stream(stream.status, stream.events)
    # The simulator writes `arguments` always, as the API does: absent ones become "{}".
    sent = tuple(
        replace(call, raw_arguments=encode_arguments(call.arguments or {}))
        if call.raw_arguments is None
        else call
        for call in decision.calls
    )
    assert from_body == from_stream == replace(decision, calls=sent)
    assert isinstance(from_body, Decision) and isinstance(from_stream, Decision)
    assert from_body.model == from_stream.model == (decision.model or "fcreplay-simulator")


def sdk_calls(message: Any) -> list[tuple[str, str, str, str]]:
    return [
        (call.id, call.type, call.function.name, call.function.arguments)
        for call in message.tool_calls or []
    ]


@settings(max_examples=100)
@given(decision=decisions(openai_only=True))
def test_rendered_responses_are_what_the_official_sdk_reads(decision: Decision) -> None:
    body = adapter.render_response(decision).body
    completion = ChatCompletion.model_validate(body)
    state = ChatCompletionStreamState()
    events = adapter.render_response(decision, stream=True).events or ()
    assert events[-1] == DONE
    for event in events[:-1]:
        state.handle_chunk(ChatCompletionChunk.model_validate(event.data))
    # The snapshot, not get_final_completion(): that one raises on length/content_filter.
    assembled = state.current_completion_snapshot.choices[0]
    expected = completion.choices[0]
    assert assembled.finish_reason == expected.finish_reason
    assert assembled.message.refusal == expected.message.refusal
    assert (assembled.message.content or None) == expected.message.content
    assert sdk_calls(assembled.message) == sdk_calls(expected.message)


def test_rendered_streams_split_arguments_into_several_fragments() -> None:
    decision = Decision(kind="tool_call", calls=(ORDER,), finish_reason="tool_calls")
    stream = adapter.render_response(decision, stream=True).events or ()
    fragments = [
        call["function"]["arguments"]
        for event in stream
        if isinstance(event.data, dict) and event.data["choices"]
        for call in event.data["choices"][0]["delta"].get("tool_calls", [])
    ]
    assert fragments[0] == "" and len(fragments) > 3
    assert "".join(fragments) == ORDER.raw_arguments
    assert stream[-2].data["choices"] == [] and "usage" in stream[-2].data


@pytest.mark.parametrize(
    ("decision", "finish"),
    [
        pytest.param(Decision(kind="text", text="Привет"), "stop", id="text"),
        pytest.param(Decision(kind="tool_call", calls=(ORDER,)), "tool_calls", id="call"),
        pytest.param(Decision(kind="invalid", calls=(ORDER,)), "length", id="cut-call"),
        pytest.param(
            Decision(kind="invalid", calls=(replace(ORDER, arguments=None, raw_arguments="{"),)),
            "tool_calls",
            id="bad-arguments",
        ),
        pytest.param(Decision(kind="refusal", text="Не могу."), "stop", id="refusal"),
        pytest.param(
            Decision(kind="refusal", stop="content_filter"), "content_filter", id="blocked"
        ),
    ],
)
def test_a_missing_finish_reason_is_rendered_as_the_natural_one(
    decision: Decision, finish: str
) -> None:
    body = adapter.render_response(decision).body
    assert body["choices"][0]["finish_reason"] == finish
    parsed_back = adapter.parse_decision(200, body)
    assert isinstance(parsed_back, Decision)
    assert (parsed_back.kind, parsed_back.calls) == (decision.kind, decision.calls)


def test_a_scripted_call_with_decoded_arguments_only_is_rendered_as_json_text() -> None:
    call = ToolCall(None, "get_order", {"order_id": "ORD-123456"}, None)
    body = adapter.render_response(Decision(kind="tool_call", calls=(call,))).body
    assert body["choices"][0]["message"]["tool_calls"] == [
        {"type": "function", "function": {"name": "get_order", "arguments": ORDER.raw_arguments}}
    ]


ERRORS = [
    ProviderError(429, "insufficient_quota", "insufficient_quota", "Quota exceeded.", False),
    ProviderError(429, "tokens", "rate_limit_exceeded", "Rate limit reached.", True, 0.644),
    ProviderError(500, "server_error", None, "The server had an error.", True),
    ProviderError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key.", False),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda error: error.code or error.type)
@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_rendered_errors_parse_back(error: ProviderError, stream: bool) -> None:
    response = adapter.render_error(error, stream=stream)
    if stream:
        assert response.status == 200 and response.events is not None
        back = adapter.parse_stream(response.status, response.events)
    else:
        assert response.status == error.status and response.events is None
        back = adapter.parse_decision(response.status, response.body)
    assert isinstance(back, ProviderError)
    assert back.message.startswith(error.message)
    assert replace(back, message=error.message) == error


@settings(max_examples=100)
@given(milliseconds=st.integers(1, 120_000))
def test_a_retry_delay_survives_rendering_to_the_millisecond(milliseconds: int) -> None:
    error = ProviderError(429, "requests", "rate_limit_exceeded", "Slow down.", True)
    rendered = adapter.render_error(replace(error, retry_after=milliseconds / 1000))
    back = adapter.parse_decision(rendered.status, rendered.body)
    assert isinstance(back, ProviderError)
    assert back.retry_after == milliseconds / 1000


# --- the recorded corpus (real exchanges of other projects; skipped when absent) -------

CORPUS_EXPECTED: dict[str, list[tuple[Any, ...]]] = {
    "test_open_ai_function_calls_tools_parallel": [("tool_call", 2)] * 2,
    "test_open_ai_function_calls_tools_streaming_parallel": [("tool_call", 2)] * 2,
    "test_open_ai_function_calls": [("tool_call", 1)] * 4,
    "test_parsed_refused_completion": [("refusal", 0)] * 3,
    "test_tool_choice_matrix[auto-openai]": [("tool_call", 1), ("text", 0)],
    "test_tool_choice_matrix[none-openai]": [("text", 0)],
    "test_tool_choice_matrix[list_single-openai]": [("tool_call", 1)],
    "test_openai_tool_output": [("tool_call", 1), ("tool_call", 1)],
    "test_openai_o1_mini_system_role[developer]": [("error", 400, "unsupported_value")],
    "test_tools_streaming_variant_a": [("tool_call", 1), ("text", 0)],
    "test_tool_use_chain_of_two_calls": [("tool_call", 1), ("tool_call", 1), ("text", 0)],
    "test_tool_calls": [("tool_call", 2)],
    "test_tool_use_failed_error": [
        ("error", 400, "tool_use_failed"), ("tool_call", 1), ("text", 0)
    ],
    "test_tool_use_failed_error_streaming": [
        ("error", 400, "tool_use_failed"), ("tool_call", 1), ("text", 0)
    ],
    "test_tool_choice_matrix[tools_plus_output-groq]": [("tool_call", 2)],
    "test_tool_choice_matrix[auto-mistral]": [("tool_call", 1), ("text", 0)],
    (
        "test_synchronous_streaming_chat_completions_with_tool_call_response_emits_expected_spans"
        "[False]"
    ): [("tool_call", 1)],
    "test_openrouter_errors_raised": [("error", 429, "429")] * 3,
    "test_deepseek_deferred_capability_with_thinking": [
        ("tool_call", 1), ("tool_call", 2), ("text", 0)
    ],
    "test_compatible_api_with_tool_calls_without_id": [("tool_call", 1), ("text", 0)],
    "test_chat_with_tool_call": [("tool_call", 1)],
}  # fmt: skip
"""What the responses of each chat cassette are (by file stem), from its MANIFEST description."""


def corpus_chat_rows() -> list[dict[str, str]]:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    with manifest.open(encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle, delimiter="\t") if row["api"] == "chat"]


def corpus_stem(row: dict[str, str]) -> str:
    return row["path"].rsplit("/", 1)[-1].removesuffix(".yaml")


def corpus_file(row: dict[str, str]) -> Path:
    """The stored copy: the source path flattened with `--`, brackets made `_`."""
    flat = "--" + corpus_stem(row).replace("[", "_").replace("]", "_")
    return next(p for p in (CORPUS / row["provider"]).glob("*.yaml") if p.stem.endswith(flat))


def sse_events(text: str) -> list[StreamEvent]:
    found: list[StreamEvent] = []
    name: str | None = None
    data: list[str] = []
    for line in [*text.splitlines(), ""]:
        if not line:
            if data:
                joined = "\n".join(data)
                try:
                    found.append(StreamEvent(name, json.loads(joined)))
                except ValueError:
                    found.append(StreamEvent(name, joined))
            name, data = None, []
        elif not line.startswith(":"):
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
    return found


def corpus_outcome(response: dict[str, Any]) -> Decision | ProviderError:
    status = response["status"]["code"]
    body = response.get("parsed_body", response.get("body", {}).get("string"))
    if isinstance(body, bytes):
        body = (gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body).decode("utf-8")
    if isinstance(body, str) and body.lstrip().startswith(("data:", "event:")):
        return adapter.parse_stream(status, sse_events(body))
    if isinstance(body, str):
        body = json.loads(body)
    return adapter.parse_decision(status, body)


def summary(outcome: Decision | ProviderError) -> tuple[Any, ...]:
    if isinstance(outcome, ProviderError):
        return ("error", outcome.status, outcome.code)
    return (outcome.kind, len(outcome.calls))


@pytest.mark.skipif(not corpus_chat_rows(), reason="the shared corpus is not present")
@pytest.mark.parametrize("row", corpus_chat_rows(), ids=corpus_stem)
def test_recorded_chat_exchanges_parse_as_their_manifest_says(row: dict[str, str]) -> None:
    expected = CORPUS_EXPECTED.get(corpus_stem(row))
    if expected is None:
        pytest.skip("a cassette added to the corpus after this table was written")
    cassette = yaml.safe_load(corpus_file(row).read_text(encoding="utf-8"))
    outcomes = [corpus_outcome(item["response"]) for item in cassette["interactions"]]
    assert [summary(outcome) for outcome in outcomes] == expected
    for outcome in outcomes:
        if isinstance(outcome, Decision):
            assert outcome.model and outcome.finish_reason in (None, "stop", "tool_calls",
                                                               "function_call")  # fmt: skip
