"""Bedrock Converse and Ollama native: the next turn, its history read back, the framing
against botocore's parser, and the lint rules they declare."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer

from fcreplay.adapters import bedrock_converse, ollama
from fcreplay.adapters.registry import get_adapter
from fcreplay.cassettes import eventstream
from fcreplay.decision import Decision, ToolCall
from fcreplay.judge.history import check_history
from fcreplay.neutral import Message, RequestSettings, StreamEvent, ToolChoice, ToolResult

CALLS = (
    ToolCall("c1", "get_order", {"order_id": "ORD-1"}, {"order_id": "ORD-1"}),
    ToolCall("c2", "get_order", {"order_id": "ORD-2"}, {"order_id": "ORD-2"}),
)


@pytest.mark.parametrize("name", ["bedrock_converse", "ollama"])
def test_the_second_turn_answers_every_call_and_reads_back_clean(name: str) -> None:
    adapter: Any = get_adapter(name)
    decision = adapter.parse_decision(
        200, adapter.render_response(Decision("tool_call", calls=CALLS, stop="tool_call")).body
    )
    results = [
        ToolResult("c2", "get_order", {"city": "Самара"}),
        ToolResult("c1", "get_order", {"code": "NOT_FOUND"}, is_error=True),
    ]
    history = adapter.append_tool_result([Message("user", "?")], decision, results)
    request = adapter.build_request("m", history, [], RequestSettings())
    assert check_history(adapter.read_history(request.body)) == []
    assert adapter.read_request(request.body, request.path).tool_result_turns == 1
    broken = adapter.append_tool_result([Message("user", "?")], decision, results[:1])
    request = adapter.build_request("m", broken, [], RequestSettings())
    assert [p.call_ids for p in check_history(adapter.read_history(request.body))] == [("c1",)]


def test_bedrock_results_are_one_user_message_in_call_order_with_error_status() -> None:
    decision = Decision("tool_call", calls=CALLS, stop="tool_call")
    results = [
        ToolResult("c2", "get_order", {"city": "Самара"}),
        ToolResult(None, "get_order", {"code": "NOT_FOUND"}, is_error=True),
    ]
    history = bedrock_converse.append_tool_result([], decision, results)
    reply = history[-1].payload  # type: ignore[union-attr]
    assert reply == {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "c1",
                    "content": [{"json": {"code": "NOT_FOUND"}}],
                    "status": "error",
                }
            },
            {"toolResult": {"toolUseId": "c2", "content": [{"json": {"city": "Самара"}}]}},
        ],
    }


def test_bedrock_none_leaves_the_tools_out_until_the_history_needs_them(contract: Any) -> None:
    none = RequestSettings(ToolChoice("none"))
    first = bedrock_converse.build_request("m", [Message("user", "?")], contract.tools, none)
    assert "toolConfig" not in first.body
    assert first.path == "/model/m/converse"
    decision = Decision("tool_call", calls=CALLS[:1], stop="tool_call")
    later = bedrock_converse.append_tool_result(
        [Message("user", "?")], decision, [ToolResult("c1", "get_order", {})]
    )
    second = bedrock_converse.build_request("us.x:0", later, contract.tools, none)
    assert "toolChoice" not in second.body["toolConfig"]
    assert second.path == "/model/us.x%3A0/converse"
    assert bedrock_converse.read_request(second.body, second.path).model == "us.x:0"


def test_ollama_always_says_whether_it_streams_and_puts_settings_in_options() -> None:
    settings = RequestSettings(temperature=0.0, top_p=0.5, max_output_tokens=7)
    body = ollama.build_request("qwen3", [Message("user", "?")], [], settings).body
    assert body["stream"] is False
    assert body["options"] == {"temperature": 0.0, "top_p": 0.5, "num_predict": 7}
    assert ollama.read_request({"model": "m", "messages": []}).stream is True  # the default


def test_our_event_stream_frames_parse_in_botocore() -> None:
    events = [
        StreamEvent("messageStart", {"role": "assistant"}),
        StreamEvent("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Привет"}}),
        StreamEvent("exception:throttlingException", {"message": "slow down"}),
    ]
    buffer = EventStreamBuffer()
    buffer.add_data(b"".join(eventstream.encode(events)))
    parsed = [(m.headers, json.loads(m.payload)) for m in buffer]
    assert [headers[":message-type"] for headers, _ in parsed] == ["event", "event", "exception"]
    assert parsed[2][0][":exception-type"] == "throttlingException"
    assert [payload for _, payload in parsed] == [event.data for event in events]
    assert eventstream.decode(b"".join(eventstream.encode(events))) == events


def test_a_corrupt_frame_ends_the_stream_there() -> None:
    frames = eventstream.encode([StreamEvent("messageStart", {"role": "assistant"})] * 3)
    broken = bytearray(b"".join(frames))
    broken[len(frames[0]) + 20] ^= 0xFF  # inside the second frame
    assert len(eventstream.decode(bytes(broken))) == 1


def test_a_throttling_exception_mid_stream_is_a_retryable_429() -> None:
    events = [StreamEvent("exception:throttlingException", {"message": "Too many requests"})]
    error = bedrock_converse.parse_stream(200, events)
    assert not isinstance(error, Decision)
    assert (error.status, error.type, error.retryable) == (429, "ThrottlingException", True)
