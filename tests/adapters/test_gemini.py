"""Tests of the Gemini generateContent (v1beta) adapter.

Every fixture under fixtures/gemini/ is synthetic (each says so in its
`_comment`): bodies and streams modelled on the examples of the providers
reference, section 5, with the example suite's delivery tools. The official
google-genai SDK is used only as an oracle: its pydantic types forbid unknown
fields, so they catch misspelt request and response fields, and it reads the
recorded corpus independently of the adapter.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from fcreplay.adapters import gemini as adapter
from fcreplay.adapters._gemini_render import CANONICAL_STATUS
from fcreplay.adapters.registry import get_adapter
from fcreplay.decision import Decision, ProviderError, Stop, ToolCall
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

from ..conftest import CORPUS
from .arrived import arrived

FIXTURES = Path(__file__).parent / "fixtures" / "gemini"
SIGNATURE = "CpMCAcu98PzT1mJ4qK0example0signature"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def parsed(name: str) -> Decision:
    fixture = load(name)
    decision = adapter.parse_decision(fixture["status"], fixture["body"])
    assert isinstance(decision, Decision)
    return decision


def events_of(name: str) -> list[StreamEvent]:
    return [StreamEvent(None, chunk) for chunk in load(name)["events"]]


def streamed(name: str) -> Decision:
    decision = adapter.parse_stream(load(name)["status"], events_of(name))
    assert isinstance(decision, Decision)
    return decision


def error_of(status: int, body: Any) -> ProviderError:
    error = adapter.parse_decision(status, body)
    assert isinstance(error, ProviderError)
    return error


def candidate(parts: list[Any], finish: Any = "STOP", **extra: Any) -> dict[str, Any]:
    content = {"role": "model", "parts": parts}
    return {"candidates": [{"content": content, "finishReason": finish, "index": 0}], **extra}


def call_part(name: str, args: Any = None, call_id: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if args is not None:
        function["args"] = args
    if call_id is not None:
        function["id"] = call_id
    return {"functionCall": function}


def wire(value: Any) -> Any:
    """What the value looks like after a trip through JSON text."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def sdk_response(body: Any) -> types.GenerateContentResponse:
    """Validate a body with the SDK's own response type (unknown fields are errors)."""
    return types.GenerateContentResponse.model_validate(wire(body))


# ---------------------------------------------------------------- module


def test_registry_returns_this_module_with_its_constants() -> None:
    module = get_adapter("gemini")
    assert module is adapter
    assert adapter.NAME == "gemini"
    assert adapter.VERSION == "2"
    assert adapter.DEFAULT_BASE_URL == "https://generativelanguage.googleapis.com"
    assert adapter.API_KEY_HEADER == "x-goog-api-key"
    assert adapter.API_KEY_PREFIX == ""


# ---------------------------------------------------------------- parsing


def test_text_answer_skips_thought_parts() -> None:
    decision = parsed("text")
    assert decision == Decision(
        kind="text",
        text="Назовите, пожалуйста, номер заказа в формате ORD-123456.",
        finish_reason="STOP",
        stop="end",
    )
    assert decision.model == "gemini-2.5-flash"
    assert decision.raw_response == load("text")["body"]


def test_one_call_is_detected_from_its_part_although_finish_is_stop() -> None:
    decision = parsed("one_call")
    assert decision == Decision(
        kind="tool_call",
        calls=(
            ToolCall(None, "get_order", {"order_id": "ORD-123456"}, {"order_id": "ORD-123456"}),
        ),
        finish_reason="STOP",
        stop="tool_call",
    )


def test_assistant_turn_is_the_candidate_content_verbatim_with_its_signature() -> None:
    body = load("one_call")["body"]
    decision = parsed("one_call")
    assert decision.assistant_turn == body["candidates"][0]["content"]
    assert decision.assistant_turn["parts"][0]["thoughtSignature"] == SIGNATURE
    assert decision.assistant_turn is not body["candidates"][0]["content"]


def test_parallel_calls_keep_order_and_ids() -> None:
    decision = parsed("parallel_calls")
    assert decision.kind == "tool_call"
    assert decision.stop == "tool_call"
    assert [(call.call_id, call.name) for call in decision.calls] == [
        ("dv8szvqe", "get_order"),
        ("j80tal12", "quote_delivery"),
    ]
    assert decision.calls[1].arguments == {
        "origin": "Казань",
        "destination": "Самара",
        "weight_kg": 2.5,
        "service": "express",
    }
    assert decision.model == "gemini-3-flash-preview"


def test_struct_doubles_that_are_integral_become_ints_and_the_raw_object_is_kept() -> None:
    body = candidate([call_part("f", {"n": 2.0, "xs": [1.0, 1.5], "flag": True, "o": {"k": 3.0}})])
    decision = adapter.parse_decision(200, body)
    assert isinstance(decision, Decision)
    (call,) = decision.calls
    assert call.arguments == {"n": 2, "xs": [1, 1.5], "flag": True, "o": {"k": 3}}
    assert call.arguments is not None
    assert type(call.arguments["n"]) is int
    assert type(call.arguments["flag"]) is bool
    assert type(call.raw_arguments["n"]) is float  # type: ignore[index]


def test_a_call_without_args_has_empty_arguments_and_no_raw() -> None:
    decision = adapter.parse_decision(200, candidate([call_part("list_orders")]))
    assert isinstance(decision, Decision)
    assert decision.kind == "tool_call"
    assert decision.calls == (ToolCall(None, "list_orders", {}, None),)


def test_args_that_are_not_an_object_are_kept_raw_and_make_the_decision_invalid() -> None:
    decision = parsed("args_not_object")
    assert decision.kind == "invalid"
    assert decision.stop == "tool_call"
    (call,) = decision.calls
    assert call.arguments is None
    assert call.raw_arguments == '{"order_id": "ORD-123456"'


def test_malformed_function_call_without_a_call_is_invalid() -> None:
    assert parsed("malformed_call") == Decision(
        kind="invalid", finish_reason="MALFORMED_FUNCTION_CALL", stop="malformed_call"
    )


def test_a_prompt_blocked_before_any_candidate_is_a_content_filter_refusal() -> None:
    decision = parsed("blocked_prompt")
    assert decision == Decision(
        kind="refusal", finish_reason="blockReason:PROHIBITED_CONTENT", stop="content_filter"
    )
    assert decision.assistant_turn is None
    assert decision.model == "gemini-2.5-flash"


def test_a_safety_stop_with_empty_content_is_a_refusal() -> None:
    assert parsed("safety_stop") == Decision(
        kind="refusal", finish_reason="SAFETY", stop="content_filter"
    )


def test_max_tokens_while_calling_is_invalid_and_keeps_the_call() -> None:
    decision = parsed("truncated_call")
    assert decision.kind == "invalid"
    assert (decision.finish_reason, decision.stop) == ("MAX_TOKENS", "length")
    assert [call.name for call in decision.calls] == ["quote_delivery"]


def test_server_side_parts_are_not_calls_but_stay_in_the_turn() -> None:
    decision = parsed("server_tool")
    assert decision == Decision(kind="text", text="Итого 300.", finish_reason="STOP", stop="end")
    assert [next(iter(part)) for part in decision.assistant_turn["parts"]] == [
        "executableCode",
        "codeExecutionResult",
        "text",
    ]
    server_invocation = candidate(
        [{"toolCall": {"toolType": "GOOGLE_SEARCH_WEB", "args": {"q": "x"}}}, {"text": "ok"}]
    )
    assert adapter.parse_decision(200, server_invocation) == Decision(
        kind="text", text="ok", finish_reason="STOP", stop="end"
    )


@pytest.mark.parametrize(
    ("finish", "stop", "kind"),
    [
        ("STOP", "end", "text"),
        ("MAX_TOKENS", "length", "text"),
        ("SAFETY", "content_filter", "refusal"),
        ("RECITATION", "content_filter", "refusal"),
        ("PROHIBITED_CONTENT", "content_filter", "refusal"),
        ("BLOCKLIST", "content_filter", "refusal"),
        ("SPII", "content_filter", "refusal"),
        ("LANGUAGE", "content_filter", "refusal"),
        ("IMAGE_SAFETY", "content_filter", "refusal"),
        ("MALFORMED_FUNCTION_CALL", "malformed_call", "invalid"),
        ("UNEXPECTED_TOOL_CALL", "malformed_call", "invalid"),
        ("TOO_MANY_TOOL_CALLS", "malformed_call", "invalid"),
        ("OTHER", "other", "text"),
        ("FINISH_REASON_UNSPECIFIED", "other", "text"),
        ("SOMETHING_NEW", "other", "text"),
    ],
)
def test_finish_reasons_without_calls(finish: str, stop: str, kind: str) -> None:
    decision = adapter.parse_decision(200, candidate([{"text": "partial"}], finish))
    assert isinstance(decision, Decision)
    assert (decision.kind, decision.stop, decision.finish_reason) == (kind, stop, finish)
    assert decision.text == "partial"


@pytest.mark.parametrize(
    ("finish", "stop", "kind"),
    [
        ("STOP", "tool_call", "tool_call"),
        ("MAX_TOKENS", "length", "invalid"),
        ("MALFORMED_FUNCTION_CALL", "malformed_call", "invalid"),
        ("SAFETY", "content_filter", "tool_call"),
    ],
)
def test_finish_reasons_with_a_call(finish: str, stop: str, kind: str) -> None:
    body = candidate([call_part("get_order", {"order_id": "ORD-123456"})], finish)
    decision = adapter.parse_decision(200, body)
    assert isinstance(decision, Decision)
    assert (decision.kind, decision.stop, len(decision.calls)) == (kind, stop, 1)


def test_a_candidate_without_finish_reason_is_an_unfinished_invalid_turn() -> None:
    body = {"candidates": [{"content": {"role": "model", "parts": [call_part("get_order")]}}]}
    decision = adapter.parse_decision(200, body)
    assert decision == Decision(
        kind="invalid",
        calls=(ToolCall(None, "get_order", {}, None),),
        finish_reason=None,
        stop="other",
    )


def test_empty_text_is_none() -> None:
    decision = adapter.parse_decision(200, candidate([{"text": ""}]))
    assert isinstance(decision, Decision)
    assert decision.text is None


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"candidates": []},
        {"candidates": "x"},
        {"candidates": [None]},
        {"candidates": [{"content": "x", "finishReason": 3}]},
        {"candidates": [{"content": {"parts": [None, 1, {"functionCall": "x"}]}}]},
        {"candidates": [{"content": {"parts": [{"functionCall": {"args": {"a": 1}}}]}}]},
        {"promptFeedback": {"blockReason": 7}},
    ],
)
def test_unexpected_shapes_never_raise(body: Any) -> None:
    assert isinstance(adapter.parse_decision(200, body), Decision)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)
shaped_bodies: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {},
    optional={
        "candidates": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "content": st.fixed_dictionaries(
                        {},
                        optional={"parts": st.lists(json_values | st.just({"functionCall": {}}))},
                    )
                    | json_values,
                    "finishReason": st.sampled_from(["STOP", "MAX_TOKENS"]) | json_values,
                },
            )
            | json_values,
            max_size=2,
        )
        | json_values,
        "promptFeedback": json_values,
        "error": json_values,
    },
)


@settings(max_examples=100, deadline=None)
@given(status=st.sampled_from([200, 400, 429, 503]), body=shaped_bodies | json_values)
def test_parsing_any_json_never_raises(status: int, body: Any) -> None:
    result = adapter.parse_decision(status, body)
    assert isinstance(result, Decision | ProviderError)
    if status != 200:
        assert isinstance(result, ProviderError)
    stream = adapter.parse_stream(status, [StreamEvent(None, body)])
    assert isinstance(stream, Decision | ProviderError)


def test_a_2xx_body_that_is_not_json_is_an_invalid_response_error() -> None:
    error = error_of(200, "<html>gateway</html>")
    assert (error.status, error.type, error.retryable) == (200, "invalid_response", False)
    assert isinstance(adapter.parse_decision(200, json.dumps(load("text")["body"])), Decision)


# ---------------------------------------------------------------- streams


@pytest.mark.parametrize(
    "stream", ["stream_text", "stream_one_call", "stream_parallel_calls"], ids=str
)
def test_a_stream_gives_the_decision_of_its_non_streamed_twin(stream: str) -> None:
    twin = load(stream)["twin"].removesuffix(".json")
    decision = streamed(stream)
    assert decision == parsed(twin)
    assert decision.model == parsed(twin).model
    assert decision.raw_response == [{"event": None, "data": c} for c in load(stream)["events"]]


@pytest.mark.parametrize("stream", ["stream_one_call", "stream_parallel_calls"], ids=str)
def test_the_assembled_turn_of_a_call_stream_equals_the_non_streamed_content(stream: str) -> None:
    twin = load(stream)["twin"].removesuffix(".json")
    assert streamed(stream).assistant_turn == parsed(twin).assistant_turn


def test_text_deltas_are_merged_and_thoughts_stay_apart() -> None:
    turn = streamed("stream_text").assistant_turn
    assert turn == {
        "role": "model",
        "parts": [
            {"text": "The user did not give an order id.", "thought": True},
            {"text": "Назовите, пожалуйста, номер заказа в формате ORD-123456."},
        ],
    }


def test_a_signature_on_a_final_empty_text_delta_joins_the_text_part() -> None:
    events = [
        StreamEvent(None, {"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]}),
        StreamEvent(None, {"candidates": [{"content": {"parts": [{"text": "lo"}]}}]}),
        StreamEvent(
            None,
            {
                "candidates": [
                    {
                        "content": {"parts": [{"text": "", "thoughtSignature": "c2ln"}]},
                        "finishReason": "STOP",
                    }
                ]
            },
        ),
    ]
    decision = adapter.parse_stream(200, events)
    assert isinstance(decision, Decision)
    assert decision.text == "Hello"
    assert decision.assistant_turn["parts"] == [{"text": "Hello", "thoughtSignature": "c2ln"}]


def test_reassembly_does_not_touch_the_recorded_events() -> None:
    events = events_of("stream_text")
    before = json.dumps([event.data for event in events])
    streamed_twice = adapter.parse_stream(200, events), adapter.parse_stream(200, events)
    assert streamed_twice[0] == streamed_twice[1]
    assert json.dumps([event.data for event in events]) == before


def test_a_json_array_stream_body_reads_like_its_sse_twin() -> None:
    chunks = load("stream_parallel_calls")["events"]
    from_body = adapter.parse_decision(200, chunks)
    assert from_body == parsed("parallel_calls")
    assert isinstance(from_body, Decision)
    assert from_body.raw_response == chunks
    # A transport may also hand the whole array over as one event.
    assert adapter.parse_stream(200, [StreamEvent(None, chunks)]) == parsed("parallel_calls")


def test_a_stream_that_never_finished_is_a_failure_keeping_what_arrived() -> None:
    fixture = load("stream_truncated")
    decision = arrived(adapter.parse_stream(fixture["status"], events_of("stream_truncated")))
    assert decision == Decision(
        kind="invalid",
        text="Проверяю заказ.",
        calls=(
            ToolCall(None, "get_order", {"order_id": "ORD-123456"}, {"order_id": "ORD-123456"}),
        ),
        finish_reason=None,
        stop="other",
    )
    assert decision.assistant_turn["parts"][1]["thoughtSignature"] == SIGNATURE


def test_a_text_stream_cut_before_its_finish_is_not_a_text_answer() -> None:
    events = events_of("stream_text")[:-1]
    decision = arrived(adapter.parse_stream(200, events))
    assert (decision.kind, decision.stop, decision.finish_reason) == ("invalid", "other", None)


def test_an_empty_stream_is_a_failure() -> None:
    assert arrived(adapter.parse_stream(200, [])) == Decision(kind="invalid", stop="other")


def test_a_blocked_prompt_stream_is_a_refusal() -> None:
    events = [StreamEvent(None, load("blocked_prompt")["body"])]
    assert adapter.parse_stream(200, events) == parsed("blocked_prompt")


def test_an_error_chunk_in_a_200_stream_is_an_error_with_its_real_status() -> None:
    events = [*events_of("stream_text")[:2], StreamEvent(None, load("error_unavailable")["body"])]
    error = adapter.parse_stream(200, events)
    assert isinstance(error, ProviderError)
    assert (error.status, error.type, error.retryable) == (503, "UNAVAILABLE", True)


def test_a_non_json_stream_event_is_an_invalid_response_error() -> None:
    events = [*events_of("stream_text")[:2], StreamEvent(None, "{not json")]
    error = adapter.parse_stream(200, events)
    assert isinstance(error, ProviderError)
    assert error.type == "invalid_response"
    blank = [StreamEvent(None, ""), *events_of("stream_text")]
    assert adapter.parse_stream(200, blank) == parsed("text")


def test_a_non_2xx_stream_status_is_an_error() -> None:
    body = load("error_quota_minute")["body"]
    error = adapter.parse_stream(429, [StreamEvent(None, body)])
    assert isinstance(error, ProviderError)
    assert (error.status, error.retry_after) == (429, 34.0)
    bare = adapter.parse_stream(500, [])
    assert isinstance(bare, ProviderError)
    assert (bare.status, bare.message, bare.retryable) == (500, "HTTP 500", True)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("error_api_key", (400, "INVALID_ARGUMENT", "API_KEY_INVALID", False, None)),
        ("error_quota_minute", (429, "RESOURCE_EXHAUSTED", None, True, 34.0)),
        ("error_quota_day", (429, "RESOURCE_EXHAUSTED", None, False, 1.5)),
        ("error_unavailable", (503, "UNAVAILABLE", None, True, None)),
        ("error_schema", (400, "INVALID_ARGUMENT", None, False, None)),
        ("error_array", (503, "UNAVAILABLE", None, True, None)),
    ],
)
def test_error_classification(name: str, expected: tuple[Any, ...]) -> None:
    fixture = load(name)
    error = error_of(fixture["status"], fixture["body"])
    assert (error.status, error.type, error.code, error.retryable, error.retry_after) == expected
    assert error.raw == fixture["body"]
    assert error.message


def test_a_pretty_printed_error_text_is_read_like_the_object() -> None:
    body = load("error_quota_minute")["body"]
    as_text = json.dumps(body, indent=2)
    assert error_of(429, as_text) == error_of(429, body)
    assert error_of(429, as_text.encode()) == error_of(429, body)


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (500, "upstream connect error", (500, None, None, "upstream connect error", True)),
        (502, "", (502, None, None, "HTTP 502", True)),
        (429, {"error": "quota exceeded"}, (429, None, None, "quota exceeded", True)),
        (
            404,
            {"code": 404, "message": "models/x is not found", "status": "NOT_FOUND"},
            (404, "NOT_FOUND", None, "models/x is not found", False),
        ),
        (
            400,
            {"error": {"code": "INVALID_ARGUMENT"}},
            (400, "INVALID_ARGUMENT", None, "HTTP 400", False),
        ),
        (503, [], (503, None, None, "HTTP 503", True)),
        (504, None, (504, None, None, "HTTP 504", True)),
        (401, 42, (401, None, None, "42", False)),
    ],
)
def test_odd_error_shapes_are_tolerated(status: int, body: Any, expected: tuple[Any, ...]) -> None:
    error = error_of(status, body)
    assert (error.status, error.type, error.code, error.message, error.retryable) == expected


def test_an_error_envelope_inside_a_200_is_an_error_with_its_real_status() -> None:
    error = error_of(200, load("error_quota_minute")["body"])
    assert (error.status, error.retryable, error.retry_after) == (429, True, 34.0)


@pytest.mark.parametrize(
    ("delay", "seconds"),
    [("34s", 34.0), ("1.5s", 1.5), ("0s", 0.0), ({"seconds": 3, "nanos": 500000000}, 3.5)],
)
def test_retry_delays_are_read_from_the_body(delay: Any, seconds: float) -> None:
    detail = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
    body = {
        "error": {"code": 429, "message": "m", "status": "RESOURCE_EXHAUSTED", "details": [detail]}
    }
    assert error_of(429, body).retry_after == seconds


def test_an_unreadable_retry_delay_is_ignored() -> None:
    details = [{"retryDelay": "soon"}, {"retryDelay": {"seconds": "x"}}, {"retryDelay": 5}]
    body = {"error": {"code": 429, "message": "m", "details": details}}
    assert error_of(429, body).retry_after is None


error_statuses = st.sampled_from([400, 403, 404, 429, 500, 503, 504])


@st.composite
def provider_errors(draw: st.DrawFn) -> ProviderError:
    status = draw(error_statuses)
    retryable = draw(st.booleans()) if status == 429 else status >= 500
    return ProviderError(
        status=status,
        type=draw(st.none() | st.sampled_from(["INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"])),
        code=draw(st.none() | st.sampled_from(["API_KEY_INVALID", "SERVICE_DISABLED"])),
        message=draw(st.text(min_size=1, max_size=40)),
        retryable=retryable,
        retry_after=draw(st.none() | st.integers(0, 100_000).map(lambda n: n / 1000)),
    )


@settings(max_examples=100, deadline=None)
@given(error=provider_errors(), stream=st.booleans())
def test_render_error_round_trips_through_parse(error: ProviderError, stream: bool) -> None:
    response = adapter.render_error(error, stream=stream)
    assert response.status == error.status
    assert response.events is None  # Gemini errors are plain bodies, streamed or not
    parsed_error = error_of(response.status, wire(response.body))
    expected_type = error.type or CANONICAL_STATUS[error.status]
    assert parsed_error.to_json() == {**error.to_json(), "type": expected_type}


def test_render_error_writes_the_documented_envelope() -> None:
    error = ProviderError(429, None, None, "quota", retryable=False, retry_after=34.0)
    body = adapter.render_error(error).body
    assert body["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert body["error"]["code"] == 429
    details = {detail["@type"].rsplit(".", 1)[1]: detail for detail in body["error"]["details"]}
    assert details["RetryInfo"]["retryDelay"] == "34s"
    assert "PerDay" in details["QuotaFailure"]["violations"][0]["quotaId"]
    plain = adapter.render_error(ProviderError(503, "UNAVAILABLE", None, "busy", True)).body
    assert plain == {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}


# ---------------------------------------------------------------- requests


def build(
    contract: Contract | None = None,
    messages: list[HistoryItem] | None = None,
    **options: Any,
) -> Any:
    tools = list(contract.tools) if contract is not None else []
    history = messages if messages is not None else [Message("user", "Где заказ ORD-123456?")]
    return adapter.build_request("gemini-2.5-flash", history, tools, RequestSettings(**options))


def test_request_basics(contract: Contract) -> None:
    request = build(
        contract,
        [
            Message("system", "Ты диспетчер."),
            Message("user", "Привет"),
            Message("assistant", "Да?"),
        ],
        temperature=0.0,
        max_output_tokens=500,
    )
    assert request.method == "POST"
    assert request.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert request.headers == {"content-type": "application/json"}
    assert request.stream is False
    body = request.body
    assert list(body) == [
        "systemInstruction",
        "contents",
        "tools",
        "toolConfig",
        "generationConfig",
    ]
    assert body["systemInstruction"] == {"parts": [{"text": "Ты диспетчер."}]}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Привет"}]},
        {"role": "model", "parts": [{"text": "Да?"}]},
    ]
    assert body["generationConfig"] == {"temperature": 0.0, "maxOutputTokens": 500}
    declarations = body["tools"][0]["functionDeclarations"]
    assert len(body["tools"]) == 1
    assert [d["name"] for d in declarations] == ["get_order", "quote_delivery", "cancel_order"]
    assert declarations[1]["parametersJsonSchema"] == contract.tools[1].parameters
    assert "parameters" not in declarations[1]


def test_request_pieces_are_valid_for_the_official_sdk_types(contract: Contract) -> None:
    body = build(
        contract,
        [Message("system", "s"), Message("user", "u")],
        tool_choice=ToolChoice("forced", "get_order"),
        temperature=0.5,
        max_output_tokens=10,
    ).body
    types.Content.model_validate(body["systemInstruction"])
    for content in body["contents"]:
        types.Content.model_validate(content)
    for tool in body["tools"]:
        types.Tool.model_validate(tool)
    types.ToolConfig.model_validate(body["toolConfig"])
    types.GenerationConfig.model_validate(body["generationConfig"])


def test_unset_generation_settings_send_no_generation_config(contract: Contract) -> None:
    assert "generationConfig" not in build(contract).body
    assert build(contract, max_output_tokens=5).body["generationConfig"] == {"maxOutputTokens": 5}


def test_streaming_uses_the_sse_path() -> None:
    request = build(stream=True)
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert request.stream is True
    assert "stream" not in request.body


def test_a_models_prefix_in_the_model_id_is_not_doubled() -> None:
    request = adapter.build_request(
        "models/gemini-2.5-pro", [Message("user", "x")], [], RequestSettings()
    )
    assert request.path == "/v1beta/models/gemini-2.5-pro:generateContent"


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        (ToolChoice("auto"), {"mode": "AUTO"}),
        (ToolChoice("required"), {"mode": "ANY"}),
        (
            ToolChoice("forced", "quote_delivery"),
            {"mode": "ANY", "allowedFunctionNames": ["quote_delivery"]},
        ),
        (ToolChoice("none"), {"mode": "NONE"}),
    ],
)
@pytest.mark.parametrize("parallel", [None, True, False])
def test_tool_choice_modes_and_no_parallel_knob(
    contract: Contract, choice: ToolChoice, config: dict[str, Any], parallel: bool | None
) -> None:
    body = build(contract, tool_choice=choice, parallel_tool_calls=parallel).body
    assert body["toolConfig"] == {"functionCallingConfig": config}
    # Gemini has no parallel-call toggle: every policy sends the same body.
    assert body == build(contract, tool_choice=choice).body
    assert "parallel" not in json.dumps(body).lower()


@pytest.mark.parametrize("parallel", [None, False])
def test_no_tools_mode_sends_no_tool_keys(contract: Contract, parallel: bool | None) -> None:
    body = build(contract, tool_choice=ToolChoice("no_tools"), parallel_tool_calls=parallel).body
    assert "tools" not in body
    assert "toolConfig" not in body


def test_an_empty_tool_list_sends_no_tool_config() -> None:
    body = build(None, tool_choice=ToolChoice("required")).body
    assert "tools" not in body
    assert "toolConfig" not in body


def test_tools_are_sent_in_the_order_given(contract: Contract) -> None:
    reversed_tools = list(reversed(contract.tools))
    request = adapter.build_request("m", [Message("user", "x")], reversed_tools, RequestSettings())
    names = [d["name"] for d in request.body["tools"][0]["functionDeclarations"]]
    assert names == ["cancel_order", "quote_delivery", "get_order"]


def test_forced_mode_needs_a_tool_name(contract: Contract) -> None:
    with pytest.raises(ValueError, match="forced"):
        build(contract, tool_choice=ToolChoice("forced"))


def test_a_system_message_after_the_conversation_started_is_refused() -> None:
    with pytest.raises(ValueError, match="system"):
        build(None, [Message("user", "x"), Message("system", "late")])


def test_wire_items_are_sent_verbatim_whether_single_or_lists() -> None:
    turn = {"role": "model", "parts": [{"functionCall": {"name": "f"}, "thoughtSignature": "s"}]}
    result = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}
    body = build(None, [Message("user", "x"), WireItem(turn), WireItem([result])]).body
    assert body["contents"][1:] == [turn, result]
    assert body["contents"][1] is not turn


# ---------------------------------------------------------------- schemas


@pytest.mark.parametrize(
    "choice",
    [
        ToolChoice("auto"),
        ToolChoice("required"),
        ToolChoice("forced", "get_order"),
        ToolChoice("none"),
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_sent_tools_give_back_the_contract(
    contract: Contract, choice: ToolChoice, strict: bool
) -> None:
    body = build(contract, tool_choice=choice, strict=strict).body
    sent = adapter.sent_tools(wire(body))
    assert [(t.name, t.description, t.parameters) for t in sent] == [
        (t.name, t.description, t.parameters) for t in contract.tools
    ]
    assert all(tool.effect == "read" for tool in sent)


def test_sent_tools_of_a_no_tools_request_is_empty(contract: Contract) -> None:
    assert adapter.sent_tools(build(contract, tool_choice=ToolChoice("no_tools")).body) == []


def test_strict_changes_nothing_because_gemini_has_no_strict_mode(contract: Contract) -> None:
    for tool in contract.tools:
        assert adapter.wire_schema(tool.parameters, True) == adapter.wire_schema(
            tool.parameters, False
        )
    assert build(contract, strict=True).body == build(contract, strict=False).body


def test_wire_schema_strips_schema_uris_but_not_properties_of_that_name() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "$schema": {"type": "string"},
            "nested": {"$schema": "x", "type": "array", "items": {"$schema": "y"}},
        },
        "$defs": {"d": {"$schema": "z", "type": "integer"}},
        "anyOf": [{"$schema": "w"}],
    }
    original = json.dumps(schema)
    assert adapter.wire_schema(schema, False) == {
        "type": "object",
        "properties": {
            "$schema": {"type": "string"},
            "nested": {"type": "array", "items": {}},
        },
        "$defs": {"d": {"type": "integer"}},
        "anyOf": [{}],
    }
    assert json.dumps(schema) == original


def test_sent_tools_skip_built_in_tools_and_odd_entries() -> None:
    body = {
        "tools": [
            {"googleSearch": {}},
            {"codeExecution": {}},
            "junk",
            {"functionDeclarations": [{"name": "no_args"}, {"description": "nameless"}, 3]},
        ]
    }
    assert adapter.sent_tools(body) == [
        ToolSpec("no_args", "", {"type": "object", "properties": {}}, "read")
    ]
    assert adapter.sent_tools("junk") == []


def test_openapi_subset_of_the_contract_drops_only_what_gemini_rejects(contract: Contract) -> None:
    dropped_by_tool = {}
    for tool in contract.tools:
        converted, dropped = adapter.to_openapi_subset(tool.parameters)
        types.Schema.model_validate(converted)  # the SDK's Schema has exactly the subset's fields
        dropped_by_tool[tool.name] = dropped
        expected = json.loads(json.dumps(tool.parameters))
        for at, keyword in dropped:
            node = expected
            for step in [part for part in at.split("/") if part]:
                node = node[step]
            del node[keyword]
        assert adapter.from_openapi_subset(converted) == expected
    assert dropped_by_tool == {
        "get_order": [("", "additionalProperties")],
        "quote_delivery": [
            ("/properties/weight_kg", "exclusiveMinimum"),
            ("", "additionalProperties"),
        ],
        "cancel_order": [("", "additionalProperties")],
    }
    converted, _ = adapter.to_openapi_subset(contract.tools[0].parameters)
    assert converted["type"] == "OBJECT"
    assert converted["properties"]["order_id"] == {
        "type": "STRING",
        "pattern": "^ORD-[0-9]{6}$",
        "description": "Идентификатор вида ORD-123456.",
    }


def test_openapi_subset_conversions() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "note": {"type": ["string", "null"], "maxLength": 10},
            "unit": {"anyOf": [{"type": "string", "enum": ["kg", "lb"]}, {"type": "null"}]},
            "kind": {"const": "parcel"},
            "level": {"type": "integer", "enum": [1, 2]},
            "either": {"type": ["string", "integer"]},
            "address": {"$ref": "#/$defs/address"},
            "choice": {"oneOf": [{"type": "string"}, {"type": "number"}]},
            "count": {"type": "integer", "multipleOf": 2, "exclusiveMaximum": 9},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "meta": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
        },
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "additionalProperties": False,
            }
        },
    }
    converted, dropped = adapter.to_openapi_subset(schema)
    props = converted["properties"]
    assert props["note"] == {"type": "STRING", "maxLength": 10, "nullable": True}
    assert props["unit"] == {"type": "STRING", "enum": ["kg", "lb"], "nullable": True}
    assert props["kind"] == {"enum": ["parcel"]}
    assert props["level"] == {"type": "INTEGER", "enum": ["1", "2"], "format": "enum"}
    assert props["either"] == {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}
    assert props["address"] == {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}
    assert props["choice"] == {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]}
    assert props["count"] == {"type": "INTEGER"}
    assert "$defs" not in converted
    assert set(dropped) == {
        ("", "$schema"),
        ("/$defs/address", "additionalProperties"),
        ("/properties/choice", "oneOf"),
        ("/properties/count", "multipleOf"),
        ("/properties/count", "exclusiveMaximum"),
        ("/properties/tags", "uniqueItems"),
        ("/properties/meta", "propertyNames"),
    }
    types.Schema.model_validate(converted)
    back = adapter.from_openapi_subset(converted)["properties"]
    assert back["note"] == {"type": ["string", "null"], "maxLength": 10}
    assert back["unit"] == {"type": ["string", "null"], "enum": ["kg", "lb", None]}
    assert back["level"] == {"type": "integer", "enum": [1, 2]}


def test_openapi_subset_drops_a_cyclic_ref_and_an_unknown_ref() -> None:
    schema = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/node"}, "ext": {"$ref": "other.json#/x"}},
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
    }
    converted, dropped = adapter.to_openapi_subset(schema)
    assert converted["properties"]["node"] == {
        "type": "OBJECT",
        "properties": {"next": {}},
    }
    assert dropped == [("/$defs/node/properties/next", "$ref"), ("/properties/ext", "$ref")]


def test_sent_tools_read_parameters_in_the_subset_form_and_snake_case() -> None:
    body = {
        "tools": [
            {
                "function_declarations": [
                    {
                        "name": "get_weather",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {
                                "location": {"type": "STRING"},
                                "unit": {"type": "STRING", "enum": ["c", "f"], "nullable": True},
                            },
                            "required": ["location"],
                            "propertyOrdering": ["location", "unit"],
                        },
                    },
                    {"name": "g", "parameters_json_schema": {"type": "object"}},
                ]
            }
        ]
    }
    assert [(t.name, t.parameters) for t in adapter.sent_tools(body)] == [
        (
            "get_weather",
            {
                "type": "object",
                "properties": {
                    "location": {"type": "string"},
                    "unit": {"type": ["string", "null"], "enum": ["c", "f", None]},
                },
                "required": ["location"],
            },
        ),
        ("g", {"type": "object"}),
    ]


# ---------------------------------------------------------------- read_request


@pytest.mark.parametrize(
    "choice",
    [
        ToolChoice("auto"),
        ToolChoice("required"),
        ToolChoice("forced", "cancel_order"),
        ToolChoice("none"),
        ToolChoice("no_tools"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_read_request_inverts_build_request(
    contract: Contract, choice: ToolChoice, stream: bool
) -> None:
    request = build(contract, tool_choice=choice, stream=stream, parallel_tool_calls=False)
    view = adapter.read_request(wire(request.body), request.path)
    assert view.model == "gemini-2.5-flash"
    assert view.last_user_text == "Где заказ ORD-123456?"
    assert view.tool_result_turns == 0
    assert view.tool_choice == choice
    assert view.tool_names == (() if choice.mode == "no_tools" else contract.names)
    assert view.parallel_tool_calls is None
    assert view.stream is stream


def test_read_request_counts_result_turns_and_keeps_the_last_plain_user_text(
    contract: Contract,
) -> None:
    history: list[HistoryItem] = [Message("user", "Где заказ ORD-123456?")]
    history = adapter.append_tool_result(
        history,
        parsed("one_call"),
        [ToolResult(None, "get_order", {"status": "in_transit"})],
    )
    request = build(contract, history)
    view = adapter.read_request(request.body, request.path)
    assert view.tool_result_turns == 1
    assert view.last_user_text == "Где заказ ORD-123456?"


def test_read_request_tolerates_other_clients_and_junk() -> None:
    body = {
        "contents": [{"parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "a"}, {"name": "b"}]}],
        "tool_config": {
            "function_calling_config": {"mode": "any", "allowed_function_names": ["b"]}
        },
    }
    view = adapter.read_request(body, "https://h/v1beta/models/gemini-x:streamGenerateContent")
    assert (view.model, view.last_user_text, view.stream) == ("gemini-x", "hi", True)
    assert view.tool_choice == ToolChoice("forced", "b")
    validated = {**body, "tool_config": {"function_calling_config": {"mode": "VALIDATED"}}}
    assert adapter.read_request(validated, "x").tool_choice == ToolChoice("auto")
    junk = adapter.read_request("junk", "/nowhere")
    assert (junk.model, junk.last_user_text, junk.tool_choice) == (
        None,
        None,
        ToolChoice("no_tools"),
    )


# ---------------------------------------------------------------- history


def test_one_result_follows_the_verbatim_model_turn() -> None:
    decision = parsed("one_call")
    start: list[HistoryItem] = [Message("user", "Где заказ ORD-123456?")]
    history = adapter.append_tool_result(
        start, decision, [ToolResult(None, "get_order", {"status": "in_transit", "city": "Самара"})]
    )
    assert history[:1] == start
    assert history[1] == WireItem(load("one_call")["body"]["candidates"][0]["content"])
    assert history[2] == WireItem(
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_order",
                        "response": {"status": "in_transit", "city": "Самара"},
                    }
                }
            ],
        }
    )
    for item in history[1:]:
        assert isinstance(item, WireItem)
        types.Content.model_validate(item.payload)


def test_parallel_results_go_in_one_user_content_in_call_order_with_errors_wrapped() -> None:
    decision = parsed("parallel_calls")
    error = {"code": "ROUTE_UNAVAILABLE", "message": "Маршрут временно недоступен"}
    results = [  # given out of order on purpose
        ToolResult("j80tal12", "quote_delivery", error, is_error=True),
        ToolResult("dv8szvqe", "get_order", {"status": "in_transit"}),
    ]
    history = adapter.append_tool_result([], decision, results)
    assert len(history) == 2
    results_turn = history[1]
    assert isinstance(results_turn, WireItem)
    assert results_turn.payload == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "dv8szvqe",
                    "name": "get_order",
                    "response": {"status": "in_transit"},
                }
            },
            {
                "functionResponse": {
                    "id": "j80tal12",
                    "name": "quote_delivery",
                    "response": {"error": error},
                }
            },
        ],
    }
    types.Content.model_validate(results_turn.payload)


def test_a_result_without_id_takes_the_id_of_the_call_it_answers() -> None:
    decision = parsed("parallel_calls")
    results = [
        ToolResult(None, "quote_delivery", {"price": 1}),
        ToolResult(None, "get_order", {"status": "new"}),
        ToolResult(None, "unknown_tool", {"x": 1}),
    ]
    payload = adapter.append_tool_result([], decision, results)[1]
    assert isinstance(payload, WireItem)
    responses = [part["functionResponse"] for part in payload.payload["parts"]]
    assert [(r.get("id"), r["name"]) for r in responses] == [
        ("dv8szvqe", "get_order"),
        ("j80tal12", "quote_delivery"),
        (None, "unknown_tool"),
    ]


def test_a_decision_without_a_provider_turn_is_replayed_from_its_calls() -> None:
    decision = Decision.from_json(parsed("parallel_calls").to_json())
    assert decision.assistant_turn is None
    turn = adapter.append_tool_result([], decision, [])[0]
    assert isinstance(turn, WireItem)
    assert turn.payload["role"] == "model"
    assert [part["functionCall"]["id"] for part in turn.payload["parts"]] == [
        "dv8szvqe",
        "j80tal12",
    ]
    # A signature cannot be invented: only the provider's own turn carries one.
    assert all("thoughtSignature" not in part for part in turn.payload["parts"])


def test_appending_does_not_share_state_with_the_decision() -> None:
    decision = parsed("one_call")
    result = ToolResult(None, "get_order", {"status": {"code": "x"}})
    turn, answer = adapter.append_tool_result([], decision, [result])
    assert isinstance(turn, WireItem)
    assert isinstance(answer, WireItem)
    turn.payload["parts"].clear()
    answer.payload["parts"][0]["functionResponse"]["response"]["status"]["code"] = "y"
    assert decision.assistant_turn["parts"]
    assert result.content == {"status": {"code": "x"}}


# ---------------------------------------------------------------- rendering


def test_rendered_bodies_and_chunks_are_valid_sdk_responses() -> None:
    for name in ("text", "one_call", "parallel_calls", "blocked_prompt", "truncated_call"):
        decision = parsed(name)
        body = adapter.render_response(decision).body
        sdk_response(body)
        for event in adapter.render_response(decision, stream=True).events or ():
            assert event.event is None
            sdk_response(event.data)


def test_rendered_streams_look_like_the_api() -> None:
    decision = parsed("parallel_calls")
    response = adapter.render_response(decision, stream=True)
    assert response.headers == {"content-type": "text/event-stream"}
    assert response.body is None
    chunks = [event.data for event in response.events or ()]
    assert [list(c["candidates"][0]["content"]["parts"][0]) for c in chunks] == [
        ["functionCall", "thoughtSignature"],
        ["functionCall"],
        ["text"],
    ]
    assert [c["candidates"][0].get("finishReason") for c in chunks] == [None, None, "STOP"]
    assert all(c["modelVersion"] == "gemini-3-flash-preview" for c in chunks)
    text_chunks = adapter.render_response(parsed("text"), stream=True).events or ()
    assert len(text_chunks) > 1


@pytest.mark.parametrize(
    ("decision", "finish"),
    [
        (Decision(kind="text", text="hi"), "STOP"),
        (
            Decision(kind="tool_call", calls=(ToolCall(None, "f", {}, None),), stop="tool_call"),
            "STOP",
        ),
        (Decision(kind="text", text="cut", stop="length"), "MAX_TOKENS"),
        (Decision(kind="refusal", stop="content_filter"), "SAFETY"),
        (Decision(kind="invalid", stop="malformed_call"), "MALFORMED_FUNCTION_CALL"),
        (Decision(kind="invalid", stop="other"), None),
    ],
)
def test_a_missing_finish_reason_renders_the_natural_one(
    decision: Decision, finish: str | None
) -> None:
    body = adapter.render_response(decision).body
    assert body["candidates"][0].get("finishReason") == finish
    assert body["modelVersion"] == "fcreplay-simulator"
    parsed_back = adapter.parse_decision(200, wire(body))
    assert isinstance(parsed_back, Decision)
    assert (parsed_back.kind, parsed_back.stop) == (decision.kind, decision.stop)


names = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_-]{0,20}", fullmatch=True)
json_arguments = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
texts = st.none() | st.text(min_size=1, max_size=60)


@st.composite
def tool_calls(draw: st.DrawFn) -> ToolCall:
    arguments = draw(json_arguments)
    # Gemini sends args as an object, or leaves them out of a no-argument call.
    raw = None if not arguments and draw(st.booleans()) else arguments
    call_id = draw(st.none() | st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1))
    return ToolCall(call_id, draw(names), arguments, raw)


CONTENT_FILTERS = ["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "LANGUAGE"]
MALFORMED = ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"]


@st.composite
def decisions(draw: st.DrawFn) -> Decision:
    calls = st.lists(tool_calls(), min_size=1, max_size=3).map(tuple)
    shape = draw(
        st.sampled_from(["call", "text", "refusal", "blocked", "malformed", "cut", "open"])
    )
    model = draw(st.none() | st.just("gemini-2.5-flash"))
    if shape == "call":
        return Decision("tool_call", draw(texts), draw(calls), "STOP", "tool_call", model=model)
    if shape == "text":
        pairs: list[tuple[str, Stop]] = [
            ("STOP", "end"),
            ("MAX_TOKENS", "length"),
            ("OTHER", "other"),
        ]
        finish, stop = draw(st.sampled_from(pairs))
        return Decision("text", draw(texts), (), finish, stop, model=model)
    if shape == "refusal":
        finish = draw(st.sampled_from(CONTENT_FILTERS))
        return Decision("refusal", draw(texts), (), finish, "content_filter", model=model)
    if shape == "blocked":
        reason = draw(st.sampled_from(["SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT"]))
        return Decision("refusal", None, (), f"blockReason:{reason}", "content_filter", model=model)
    if shape == "malformed":
        some_calls = draw(st.just(()) | calls)
        return Decision(
            "invalid", draw(texts), some_calls, draw(st.sampled_from(MALFORMED)), "malformed_call"
        )
    if shape == "cut":
        return Decision("invalid", draw(texts), draw(calls), "MAX_TOKENS", "length", model=model)
    # An unfinished turn: no finishReason was ever sent.
    return Decision("invalid", draw(texts), draw(st.just(()) | calls), None, "other", model=model)


@settings(max_examples=100, deadline=None)
@given(decisions())
def test_round_trip_of_non_streamed_bodies(decision: Decision) -> None:
    response = adapter.render_response(decision)
    assert response.status == 200
    assert response.events is None
    back = adapter.parse_decision(200, wire(response.body))
    assert back == decision
    assert isinstance(back, Decision)
    assert back.model == (decision.model or "fcreplay-simulator")


@settings(max_examples=100, deadline=None)
@given(decisions())
def test_round_trip_of_streams(decision: Decision) -> None:
    response = adapter.render_response(decision, stream=True)
    events = [StreamEvent(event.event, wire(event.data)) for event in response.events or ()]
    back = adapter.parse_stream(200, events)
    if decision.finish_reason is None and decision.stop == "other":
        # A turn without a finish reason is how a cut stream reads: not a decision.
        assert arrived(back) == decision
        return
    assert back == decision
    assert isinstance(back, Decision)
    plain = adapter.parse_decision(200, wire(adapter.render_response(decision).body))
    assert isinstance(plain, Decision)
    if plain.assistant_turn:  # a turn with parts reassembles to the non-streamed content
        assert back.assistant_turn == plain.assistant_turn
    # The same chunks as a JSON-array body (streamGenerateContent without alt=sse).
    assert adapter.parse_decision(200, [event.data for event in events]) == decision


# ---------------------------------------------------------------- corpus


def _corpus_interactions() -> list[Any]:
    folder = CORPUS / "google"
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        for index, interaction in enumerate(document["interactions"]):
            if "GenerateContent" in interaction["request"]["uri"].replace(":g", ":G"):
                found.append(pytest.param(interaction, id=f"{path.stem[:60]}#{index}"))
    return found


def _recorded_response(interaction: dict[str, Any]) -> tuple[int, list[Any], bool]:
    """The response's chunks (one for a plain body) and whether it was a stream."""
    response = interaction["response"]
    status = response["status"]["code"]
    if "parsed_body" in response:
        return status, [response["parsed_body"]], False
    text = response["body"]["string"]
    if isinstance(text, bytes):
        text = gzip.decompress(text).decode("utf-8")
    if text.lstrip().startswith("data:"):
        chunks = []
        for block in text.replace("\r\n", "\n").split("\n\n"):
            data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
            if data:
                chunks.append(json.loads("\n".join(data)))
        return status, chunks, True
    body = json.loads(text)
    return status, body if isinstance(body, list) else [body], isinstance(body, list)


@pytest.mark.skipif(not _corpus_interactions(), reason="shared corpus not present")
@pytest.mark.parametrize("interaction", _corpus_interactions())
def test_recorded_exchanges_parse_like_the_official_sdk_reads_them(
    interaction: dict[str, Any],
) -> None:
    status, chunks, is_stream = _recorded_response(interaction)
    if is_stream:
        decision = adapter.parse_stream(status, [StreamEvent(None, chunk) for chunk in chunks])
    else:
        decision = adapter.parse_decision(status, chunks[0])
    assert isinstance(decision, Decision)
    sdk_calls: list[tuple[Any, ...]] = []
    sdk_text = ""
    for chunk in chunks:
        # The SDK's own reader, which drops fields newer than its types.
        response = types.GenerateContentResponse._from_response(response=wire(chunk), kwargs={})
        sdk_calls += [(c.id, c.name, c.args or {}) for c in response.function_calls or []]
        content = response.candidates[0].content if response.candidates else None
        sdk_text += "".join(
            p.text for p in (content and content.parts) or [] if p.text and not p.thought
        )
    assert [(c.call_id, c.name, c.arguments) for c in decision.calls] == sdk_calls
    assert (decision.text or "") == sdk_text
    assert decision.kind in ("tool_call", "text", "refusal")
    request = interaction["request"]
    body = request.get("parsed_body") or json.loads(request["body"])
    view = adapter.read_request(body, request["uri"])
    assert view.tool_names == tuple(tool.name for tool in adapter.sent_tools(body))
    for tool in adapter.sent_tools(body):
        assert tool.parameters.get("type") in ("object", None)
