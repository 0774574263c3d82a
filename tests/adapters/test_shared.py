"""What the adapters share: the truncated-stream rule, the OpenAI strict transform, error reading.

Streams here are rendered by the adapters themselves and then cut short; error
bodies are the synthetic ones of the Chat Completions fixtures.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fcreplay.adapters import openai_chat, openai_responses
from fcreplay.adapters._openai_errors import read_envelope, retry_after
from fcreplay.adapters.registry import BUILT_IN, get_adapter
from fcreplay.decision import Decision, ProviderError, ToolCall
from fcreplay.neutral import StreamEvent

FIXTURES = Path(__file__).parent / "fixtures"

# --- the truncated-stream rule -----------------------------------------------------------


def _chat_end(event: StreamEvent) -> bool:
    if event.data == "[DONE]":
        return True
    choices = event.data.get("choices") if isinstance(event.data, dict) else None
    return any(choice.get("finish_reason") is not None for choice in choices or [])


def _gemini_end(event: StreamEvent) -> bool:
    candidates = event.data.get("candidates") if isinstance(event.data, dict) else None
    return any("finishReason" in candidate for candidate in candidates or [])


def _typed(*kinds: str) -> Callable[[StreamEvent], bool]:
    return lambda event: isinstance(event.data, dict) and event.data.get("type") in kinds


TERMINAL: dict[str, Callable[[StreamEvent], bool]] = {
    "openai_chat": _chat_end,
    "openai_responses": _typed("response.completed", "response.incomplete", "response.failed"),
    "anthropic": _typed("message_stop", "message_delta"),
    "gemini": _gemini_end,
    "bedrock_converse": lambda event: event.event == "messageStop",
    "ollama": lambda event: isinstance(event.data, dict) and event.data.get("done") is True,
}
"""The events that end a turn (or carry its stop reason) in each wire format."""

ORDER = ToolCall("call_1", "get_order", {"order_id": "ORD-123456"}, None)
ANSWERS = {
    "text": Decision(kind="text", text="Уточните номер заказа, пожалуйста.", stop="end"),
    "call": Decision(kind="tool_call", calls=(ORDER,), stop="tool_call"),
}


def test_every_adapter_names_its_terminal_events() -> None:
    assert set(TERMINAL) == set(BUILT_IN)


@pytest.mark.parametrize("shape", sorted(ANSWERS))
@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_a_stream_cut_before_its_end_is_a_retryable_failure_keeping_what_arrived(
    name: str, shape: str
) -> None:
    adapter = get_adapter(name)
    answer = ANSWERS[shape]
    events = adapter.render_response(answer, stream=True).events
    assert events is not None
    whole = adapter.parse_stream(200, events)
    assert isinstance(whole, Decision)
    assert (whole.kind, whole.text) == (answer.kind, answer.text)
    assert [call.arguments for call in whole.calls] == [call.arguments for call in answer.calls]
    cut = next(index for index, event in enumerate(events) if TERMINAL[name](event))
    error = adapter.parse_stream(200, events[:cut])
    # Not a decision of the model: the answer never ended, so it is sent again.
    assert isinstance(error, ProviderError)
    assert (error.type, error.retryable) == ("incomplete_stream", True)
    decision = error.raw  # what had arrived, for `fcreplay inspect`
    assert isinstance(decision, Decision)
    assert (decision.kind, decision.stop, decision.finish_reason) == ("invalid", "other", None)
    assert decision.calls == whole.calls  # each call as its wire format carries it
    assert (answer.text or "").startswith(decision.text or "")


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_an_empty_stream_is_truncated(name: str) -> None:
    error = get_adapter(name).parse_stream(200, [])
    assert isinstance(error, ProviderError) and error.type == "incomplete_stream"
    assert error.code == "after 0 events"


# --- the OpenAI strict transform ---------------------------------------------------------

OPTIONAL: dict[str, tuple[dict[str, Any], list[Any]]] = {
    # property schema, values it accepted before the transform
    "plain": ({"type": "string", "maxLength": 5}, ["abc"]),
    "enum": ({"type": "string", "enum": ["standard", "express"]}, ["express"]),
    "untyped_enum": ({"enum": [1, "a"]}, [1, "a"]),
    "const": ({"const": "fixed"}, ["fixed"]),
    "ref": ({"$ref": "#/$defs/zip"}, ["12345"]),
    "any_of": ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, [3, "x"]),
    "untyped": ({"minimum": 2}, [3, "anything"]),
    "union": ({"type": ["string", "integer"]}, ["a", 4]),
    "nullable": ({"type": ["string", "null"]}, ["a", None]),
    "enum_null_type_only": ({"type": ["string", "null"], "enum": ["a"]}, ["a"]),
    "array": ({"type": "array", "items": {"type": "integer"}}, [[1, 2]]),
    "object": ({"type": "object", "properties": {"k": {"type": "string"}}}, [{"k": "v"}]),
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "string"}, **{key: s for key, (s, _) in OPTIONAL.items()}},
    "required": ["id"],
    "$defs": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
}


def test_both_openai_adapters_send_one_strict_transform() -> None:
    assert openai_chat.wire_schema is openai_responses.wire_schema
    assert openai_chat.wire_schema(SCHEMA, True) == openai_responses.wire_schema(SCHEMA, True)


def test_the_strict_transform_closes_objects_and_requires_every_property() -> None:
    strict = openai_chat.wire_schema(SCHEMA, True)
    assert strict["additionalProperties"] is False
    assert strict["required"] == ["id", *OPTIONAL]
    nested = strict["properties"]["object"]
    nested = nested.get("anyOf", [nested])[0]
    assert (nested["required"], nested["additionalProperties"]) == (["k"], False)


@pytest.mark.parametrize("key", sorted(OPTIONAL))
def test_an_optional_property_accepts_null_and_everything_it_accepted(key: str) -> None:
    strict = openai_chat.wire_schema(SCHEMA, True)
    validator = jsonschema.Draft202012Validator(strict)
    base = dict.fromkeys(OPTIONAL) | {"id": "x"}
    for value in [None, *OPTIONAL[key][1]]:
        instance = base | {key: value}
        assert not list(validator.iter_errors(instance)), (key, value)


def test_a_restricted_schema_is_kept_whole_as_one_branch() -> None:
    properties = openai_chat.wire_schema(SCHEMA, True)["properties"]
    for key in ("enum", "untyped_enum", "const", "ref", "untyped", "enum_null_type_only"):
        assert properties[key] == {"anyOf": [OPTIONAL[key][0], {"type": "null"}]}, key
    assert properties["plain"] == {"type": ["string", "null"], "maxLength": 5}
    assert properties["any_of"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]
    }
    assert properties["nullable"] == OPTIONAL["nullable"][0]


def test_the_strict_transform_is_idempotent_and_leaves_its_input_alone() -> None:
    before = copy.deepcopy(SCHEMA)
    once = openai_responses.wire_schema(SCHEMA, True)
    assert openai_responses.wire_schema(once, True) == once
    assert before == SCHEMA


PROPERTIES = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            ["string", "integer", "null", ["string", "null"], ["integer", "string"]]
        ),
        "enum": st.lists(st.sampled_from(["a", None, 1]), min_size=1, max_size=3),
        "const": st.sampled_from(["a", None, 1]),
        "$ref": st.just("#/$defs/zip"),
        "anyOf": st.lists(
            st.fixed_dictionaries({"type": st.sampled_from(["string", "null", "integer"])}),
            min_size=1,
            max_size=2,
        ),
        "not": st.fixed_dictionaries({"type": st.sampled_from(["null", "integer"])}),
        "minimum": st.just(0),
        "maxLength": st.just(3),
    },
)
SAMPLES: list[Any] = [None, "a", "abcdef", "12345", 1, -5, 2.5, True, [], {}]


@settings(max_examples=100)
@given(PROPERTIES)
def test_any_optional_property_accepts_null_and_loses_no_value(schema: dict[str, Any]) -> None:
    root = {"type": "object", "properties": {"p": schema}, "$defs": SCHEMA["$defs"]}
    before = jsonschema.Draft202012Validator(root)
    after = jsonschema.Draft202012Validator(openai_chat.wire_schema(root, True))
    assert after.is_valid({"p": None})
    assert all(after.is_valid({"p": value}) for value in SAMPLES if before.is_valid({"p": value}))


# --- OpenAI error envelopes --------------------------------------------------------------

CHAT_ERRORS = json.loads((FIXTURES / "openai_chat" / "errors.json").read_text())["cases"]
HTTP_ERRORS = [case for case in CHAT_ERRORS if case["status"] >= 400]


@pytest.mark.parametrize("case", HTTP_ERRORS, ids=[case["name"] for case in HTTP_ERRORS])
def test_both_openai_adapters_read_an_error_body_alike(case: dict[str, Any]) -> None:
    chat = openai_chat.parse_decision(case["status"], case["body"])
    responses = openai_responses.parse_decision(case["status"], case["body"])
    assert isinstance(chat, ProviderError) and isinstance(responses, ProviderError)
    assert chat == responses


@pytest.mark.parametrize(
    ("message", "seconds"),
    [
        ("Please try again in 644ms.", 0.644),
        ("Please try again in 20s.", 20.0),
        ("Please try again in 1.898s. Visit ...", 1.898),
        ("Please try again in 15m28.5s.", 928.5),
        ("Please try again in 1h2m3s", 3723.0),
        ("Please slow down.", None),
    ],
)
def test_retry_delays_are_read_from_the_message(message: str, seconds: float | None) -> None:
    assert retry_after(message) == (pytest.approx(seconds) if seconds is not None else None)


def test_a_delay_is_only_kept_when_the_error_is_worth_retrying() -> None:
    body = {"error": {"message": "Bad request; try again in 5s.", "type": "invalid_request_error"}}
    for adapter in (openai_chat, openai_responses):
        error = adapter.parse_decision(400, body)
        assert isinstance(error, ProviderError)
        assert (error.retryable, error.retry_after) == (False, None)


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"error": {"message": "m", "type": "t", "code": 400}}, ("t", "400", "m")),
        ({"object": "error", "message": "m", "type": "t", "code": 3280}, ("t", "3280", "m")),
        ({"error": "model not found", "code": "x"}, (None, "x", "model not found")),
        ({"detail": "Not Found"}, (None, None, "Not Found")),
        ({"detail": [{"msg": "Field required"}]}, (None, None, None)),
        ("  <html>502</html>\n", (None, None, "<html>502</html>")),
        ({"error": {"code": True, "type": {"odd": 1}}}, (None, None, None)),
        (None, (None, None, None)),
    ],
)
def test_error_envelopes_of_every_shape_are_read(body: Any, fields: tuple[Any, ...]) -> None:
    envelope = read_envelope(body)
    assert (envelope.type, envelope.code, envelope.message) == fields
