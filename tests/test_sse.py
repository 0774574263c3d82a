"""SSE framing: parsing per the providers reference §1.5, writing, and the round trip."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fcreplay.cassettes.sse import SSEDecoder, format_sse, parse_sse
from fcreplay.neutral import StreamEvent


def test_named_events_with_json_data_and_the_done_sentinel() -> None:
    text = (
        "event: message_start\n"
        'data: {"type":"message_start"}\n'
        "\n"
        'data: {"choices":[]}\n'
        "\n"
        "data: [DONE]\n"
        "\n"
    )
    assert parse_sse(text) == [
        StreamEvent("message_start", {"type": "message_start"}),
        StreamEvent(None, {"choices": []}),
        StreamEvent(None, "[DONE]"),
    ]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert parse_sse('data: {\ndata:  "a": 1\ndata: }\n\n') == [StreamEvent(None, {"a": 1})]
    assert parse_sse("data: one\ndata: two\n\n") == [StreamEvent(None, "one\ntwo")]


def test_comments_ids_retry_and_unknown_fields_are_ignored() -> None:
    text = ": keep-alive\nid: 7\nretry: 100\nfoo: bar\nevent: ping\ndata: {}\n\n: bye\n\n"
    assert parse_sse(text) == [StreamEvent("ping", {})]


def test_an_event_without_data_is_not_dispatched() -> None:
    assert parse_sse("event: ping\n\nevent: other\ndata: 1\n\n") == [StreamEvent("other", 1)]


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_every_line_break_style(newline: str) -> None:
    text = newline.join(["event: a", "data: 1", "", "data: x", "", ""])
    assert parse_sse(text) == [StreamEvent("a", 1), StreamEvent(None, "x")]


def test_a_stream_without_the_trailing_blank_line_still_yields_its_last_event() -> None:
    assert parse_sse('data: {"a":1}\n\ndata: {"b":2}') == [
        StreamEvent(None, {"a": 1}),
        StreamEvent(None, {"b": 2}),
    ]


def test_only_one_space_after_the_colon_is_stripped_and_a_bom_is_dropped() -> None:
    assert parse_sse("\ufeffdata:x\n\ndata:  y\n\ndata\n\n") == [
        StreamEvent(None, "x"),
        StreamEvent(None, " y"),
        StreamEvent(None, ""),
    ]


def test_unicode_line_separators_inside_json_do_not_split_lines() -> None:
    assert parse_sse('data: {"t":"a\u2028b\x85c"}\n\n') == [
        StreamEvent(None, {"t": "a\u2028b\x85c"})
    ]


def test_format_writes_compact_json_and_raw_strings() -> None:
    events = [StreamEvent("delta", {"text": "é", "n": [1, 2]}), StreamEvent(None, "[DONE]")]
    assert format_sse(events) == 'event: delta\ndata: {"text":"é","n":[1,2]}\n\ndata: [DONE]\n\n'


def test_format_quotes_a_string_that_would_read_back_as_json() -> None:
    events = [StreamEvent(None, "123"), StreamEvent(None, "a\rb"), StreamEvent(None, "a\nb")]
    assert format_sse(events) == 'data: "123"\n\ndata: "a\\rb"\n\ndata: a\ndata: b\n\n'
    assert parse_sse(format_sse(events)) == events


def test_format_refuses_an_event_name_with_a_line_break() -> None:
    with pytest.raises(ValueError, match="line break"):
        format_sse([StreamEvent("a\nb", 1)])


def test_decoder_fed_line_by_line_like_httpx_iter_lines() -> None:
    decoder = SSEDecoder()
    produced = [decoder.line(line) for line in ["event: a", "data: 1", "", "data: 2"]]
    assert produced == [None, None, StreamEvent("a", 1), None]
    assert decoder.close() == [StreamEvent(None, 2)]


def test_decoder_handles_chunks_split_anywhere_even_inside_crlf() -> None:
    text = 'event: a\r\ndata: {"k": "v"}\r\n\r\ndata: [DONE]\r\n\r\n'
    expected = [StreamEvent("a", {"k": "v"}), StreamEvent(None, "[DONE]")]
    for size in range(1, len(text) + 1):
        decoder = SSEDecoder()
        events = []
        for start in range(0, len(text), size):
            events.extend(decoder.feed(text[start : start + size]))
        events.extend(decoder.close())
        assert events == expected, size


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
event_names = st.none() | st.text(
    alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), max_size=12
)


@st.composite
def stream_events(draw: Any) -> StreamEvent:
    return StreamEvent(draw(event_names), draw(json_values))


@settings(max_examples=200)
@given(st.lists(stream_events(), max_size=6))
def test_round_trip_format_then_parse(events: list[StreamEvent]) -> None:
    assert parse_sse(format_sse(events)) == events


@settings(max_examples=100)
@given(st.lists(stream_events(), max_size=4), st.integers(min_value=1, max_value=7))
def test_incremental_decoder_matches_parse(events: list[StreamEvent], size: int) -> None:
    text = format_sse(events).replace("\n", "\r\n")
    decoder = SSEDecoder()
    produced = []
    for start in range(0, len(text), size):
        produced.extend(decoder.feed(text[start : start + size]))
    produced.extend(decoder.close())
    assert produced == parse_sse(text) == events
