"""Stream framings other than SSE's text: NDJSON lines and the AWS binary event stream.

The transport picks a framing by the answer's content type, cassette readers by the
request URL's adapter (`Capabilities.stream_framing`) when a recorder kept no content
type, and the simulator and the vcrpy serializer write events back in it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from fcreplay.cassettes import eventstream
from fcreplay.cassettes.sse import decode_data, format_sse, parse_sse
from fcreplay.neutral import StreamEvent, StreamFraming

CONTENT_TYPES: dict[StreamFraming, str] = {
    "sse": "text/event-stream",
    "ndjson": "application/x-ndjson",
    "aws-eventstream": eventstream.CONTENT_TYPE,
}


def framing_of(content_type: str) -> StreamFraming | None:
    """The framing a content type announces, or None for a plain body."""
    lower = content_type.lower()
    for framing, announced in CONTENT_TYPES.items():
        if lower.startswith(announced):
            return framing
    return None


def decode_ndjson(text: str) -> tuple[StreamEvent, ...]:
    """One event per non-blank line; a line that is not JSON is kept as its text."""
    return tuple(StreamEvent(None, decode_data(line)) for line in text.splitlines() if line.strip())


def looks_like_ndjson(text: str) -> bool:
    """Whether text holds two or more lines that are each a JSON object."""
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) > 1 and all(isinstance(decode_data(line), dict) for line in lines)


def decode(framing: StreamFraming, raw: bytes) -> tuple[StreamEvent, ...]:
    """The events of a whole stream body in `framing`."""
    if framing == "aws-eventstream":
        return tuple(eventstream.decode(raw))
    text = raw.decode("utf-8", errors="replace")
    return decode_ndjson(text) if framing == "ndjson" else tuple(parse_sse(text))


def encode(framing: StreamFraming, events: Iterable[StreamEvent]) -> list[bytes]:
    """The events as the chunks a server writes, one per event."""
    if framing == "aws-eventstream":
        return eventstream.encode(events)
    if framing == "ndjson":
        return [
            (json.dumps(e.data, ensure_ascii=False) + "\n").encode("utf-8")
            if not isinstance(e.data, str)
            else (e.data + "\n").encode("utf-8")
            for e in events
        ]
    return [format_sse([event]).encode("utf-8") for event in events]
