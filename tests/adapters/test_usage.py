"""Token usage, normalized per adapter: input with cached tokens in it, output with reasoning."""

from __future__ import annotations

from typing import Any

import pytest

from fcreplay.adapters.registry import get_adapter
from fcreplay.decision import Decision, ProviderError, Usage
from fcreplay.neutral import StreamEvent

TEXT = "Назовите номер заказа."


def decided(result: Decision | ProviderError) -> Decision:
    assert isinstance(result, Decision), result
    return result


@pytest.mark.parametrize(
    ("name", "body", "expected"),
    [
        (
            "openai_chat",
            {
                "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT}}],
                "usage": {
                    "prompt_tokens": 120,
                    "completion_tokens": 30,
                    "prompt_tokens_details": {"cached_tokens": 100},
                    "completion_tokens_details": {"reasoning_tokens": 12},
                },
            },
            Usage(120, 30, 100, 12),
        ),
        (
            "openai_responses",
            {
                "status": "completed",
                "output": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": TEXT}],
                    }
                ],
                "usage": {
                    "input_tokens": 120,
                    "input_tokens_details": {"cached_tokens": 64},
                    "output_tokens": 40,
                    "output_tokens_details": {"reasoning_tokens": 30},
                },
            },
            Usage(120, 40, 64, 30),
        ),
        (
            # Anthropic counts cache reads and writes apart from input_tokens.
            "anthropic",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": TEXT}],
                "stop_reason": "end_turn",
                "usage": {
                    "input_tokens": 20,
                    "cache_read_input_tokens": 100,
                    "cache_creation_input_tokens": 5,
                    "output_tokens": 9,
                },
            },
            Usage(125, 9, 100, None),
        ),
        (
            # Gemini counts thoughts apart from candidatesTokenCount.
            "gemini",
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": TEXT}]},
                        "finishReason": "STOP",
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": 80,
                    "candidatesTokenCount": 10,
                    "thoughtsTokenCount": 25,
                    "cachedContentTokenCount": 60,
                },
            },
            Usage(80, 35, 60, 25),
        ),
        (
            # Bedrock, like Anthropic, counts cache reads and writes apart from inputTokens.
            "bedrock_converse",
            {
                "output": {"message": {"role": "assistant", "content": [{"text": TEXT}]}},
                "stopReason": "end_turn",
                "usage": {
                    "inputTokens": 20,
                    "outputTokens": 9,
                    "totalTokens": 134,
                    "cacheReadInputTokens": 100,
                    "cacheWriteInputTokens": 5,
                },
            },
            Usage(125, 9, 100, None),
        ),
        (
            "ollama",
            {
                "model": "llama3.2",
                "message": {"role": "assistant", "content": TEXT},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 41,
                "eval_count": 12,
            },
            Usage(41, 12),
        ),
    ],
)
def test_each_format_reads_into_the_same_meaning(name: str, body: Any, expected: Usage) -> None:
    decision = decided(get_adapter(name).parse_decision(200, body))
    assert decision.usage == expected
    assert decision.to_json()["usage"] == expected.to_json()


def test_anthropic_streams_add_the_delta_totals_to_the_start() -> None:
    events = [
        StreamEvent(
            "message_start",
            {
                "type": "message_start",
                "message": {"usage": {"input_tokens": 50, "output_tokens": 1}},
            },
        ),
        StreamEvent(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        StreamEvent(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": TEXT},
            },
        ),
        StreamEvent(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 7},
            },
        ),
        StreamEvent("message_stop", {"type": "message_stop"}),
    ]
    assert decided(get_adapter("anthropic").parse_stream(200, events)).usage == Usage(50, 7)


@pytest.mark.parametrize(
    "name",
    ["openai_chat", "openai_responses", "anthropic", "gemini", "bedrock_converse", "ollama"],
)
@pytest.mark.parametrize("stream", [False, True])
def test_the_usage_rendered_is_the_usage_read_back(name: str, stream: bool) -> None:
    adapter = get_adapter(name)
    usage = Usage(input_tokens=300, output_tokens=40, cached_tokens=200, reasoning_tokens=10)
    if name in ("anthropic", "bedrock_converse"):
        usage = Usage(300, 40, 200)  # neither reports a reasoning count
    elif name == "ollama":
        usage = Usage(300, 40)  # nor Ollama a cached one
    decision = Decision("text", TEXT, stop="end", usage=usage)
    response = adapter.render_response(decision, stream=stream)
    if stream:
        assert response.events is not None
        back = adapter.parse_stream(200, list(response.events))
    else:
        back = adapter.parse_decision(200, response.body)
    assert decided(back).usage == usage


def test_an_answer_without_usage_has_none() -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT}}]}
    decision = decided(get_adapter("openai_chat").parse_decision(200, body))
    assert decision.usage is None and "usage" not in decision.to_json()


_CHAT_CHUNK = {"object": "chat.completion.chunk", "model": "m"}
_CUT_STREAMS: list[tuple[str, list[StreamEvent], StreamEvent]] = [
    (
        "openai_chat",
        [
            StreamEvent(
                None, {**_CHAT_CHUNK, "choices": [{"index": 0, "delta": {"content": TEXT}}]}
            ),
            StreamEvent(None, {**_CHAT_CHUNK, "choices": [], "usage": {"prompt_tokens": 9}}),
        ],
        StreamEvent(None, "[DONE]"),
    ),
    (
        "anthropic",
        [
            StreamEvent(
                "message_start",
                {"type": "message_start", "message": {"usage": {"input_tokens": 9}}},
            ),
            StreamEvent(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            ),
            StreamEvent(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": TEXT},
                },
            ),
        ],
        StreamEvent("message_stop", {"type": "message_stop"}),
    ),
    (
        "gemini",
        [
            StreamEvent(
                None,
                {
                    "candidates": [{"content": {"role": "model", "parts": [{"text": TEXT}]}}],
                    "usageMetadata": {"promptTokenCount": 9},
                },
            )
        ],
        StreamEvent(None, {"candidates": [{"finishReason": "STOP"}]}),
    ),
]


@pytest.mark.parametrize(("name", "events", "end"), _CUT_STREAMS, ids=[c[0] for c in _CUT_STREAMS])
def test_a_cut_stream_keeps_its_turn_without_usage_and_the_whole_one_has_it(
    name: str, events: list[StreamEvent], end: StreamEvent
) -> None:
    # The usage goes into a decision as it is made: a stream cut short keeps its partial
    # turn without one (as when the usage was set on what parsed), the whole stream has it.
    adapter = get_adapter(name)
    cut = adapter.parse_stream(200, events)
    assert isinstance(cut, ProviderError)
    assert isinstance(cut.raw, Decision)
    assert (cut.raw.text, cut.raw.usage) == (TEXT, None)
    whole = decided(adapter.parse_stream(200, [*events, end]))
    assert whole.text == TEXT
    assert whole.usage is not None
    assert whole.usage.input_tokens == 9


def test_a_gemini_body_without_a_finish_reason_is_invalid_with_its_usage() -> None:
    body = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": TEXT}]}}],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 3},
    }
    decision = decided(get_adapter("gemini").parse_decision(200, body))
    assert (decision.kind, decision.stop, decision.finish_reason) == ("invalid", "other", None)
    assert decision.usage == Usage(input_tokens=9, output_tokens=3)


def test_anthropic_usage_is_read_from_events_whose_other_fields_are_odd() -> None:
    # Usage is gathered in the pass that reads the blocks: a message_delta whose `delta`
    # is no object still counts, and a message_start without a message object adds nothing.
    events = [
        StreamEvent("message_start", {"type": "message_start", "message": "odd"}),
        StreamEvent(
            "message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 4}}}
        ),
        StreamEvent(
            "message_delta", {"type": "message_delta", "delta": None, "usage": {"output_tokens": 2}}
        ),
        StreamEvent(
            "message_delta",
            {"type": "message_delta", "usage": {"output_tokens": 5, "input_tokens": None}},
        ),
        StreamEvent("message_delta", "not json"),
        StreamEvent("message_stop", {"type": "message_stop"}),
    ]
    decision = decided(get_adapter("anthropic").parse_stream(200, events))
    assert decision.usage == Usage(input_tokens=4, output_tokens=5)
