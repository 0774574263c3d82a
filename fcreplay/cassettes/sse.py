"""Server-sent events: parse a text stream into events and write events back."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from fcreplay.neutral import StreamEvent

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""SSE lines end with CRLF, CR or LF, and nothing else: `str.splitlines` would also
split on U+2028 and friends, which JSON written with ensure_ascii=False may hold."""


def decode_data(text: str) -> Any:
    """Return the JSON value of an event's data, or the text itself when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class SSEDecoder:
    """Incremental SSE parser: feed it lines (httpx `iter_lines`) or raw text chunks.

    Events are dispatched on a blank line; `close()` dispatches an event the
    stream left without its trailing blank line, as the official SDKs do.
    """

    __slots__ = ("_buffer", "_data", "_event", "_skip_lf", "_started")

    def __init__(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []
        self._buffer = ""
        self._skip_lf = False
        self._started = False

    def line(self, line: str) -> StreamEvent | None:
        """Process one line (without its line break); return the event it completes."""
        if not self._started:
            self._started = True
            line = line.removeprefix("\ufeff")
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None  # comment / keep-alive
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        # `id:` and `retry:` steer reconnection, which a recording never does.
        return None

    def feed(self, chunk: str) -> list[StreamEvent]:
        """Process a chunk of text that may end mid-line; return the events it completes."""
        if not chunk:
            return []
        if self._skip_lf and chunk[0] == "\n":
            chunk = chunk[1:]
        # A CR at the end of a chunk may be the first half of a CRLF split across chunks.
        self._skip_lf = chunk.endswith("\r")
        lines = _LINE_BREAK.split(self._buffer + chunk)
        self._buffer = lines.pop()
        events = []
        for line in lines:
            event = self.line(line)
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[StreamEvent]:
        """End of stream: return the events still pending (unterminated last line or event)."""
        events = []
        if self._buffer:
            buffered, self._buffer = self._buffer, ""
            event = self.line(buffered)
            if event is not None:
                events.append(event)
        event = self._dispatch()
        if event is not None:
            events.append(event)
        return events

    def _dispatch(self) -> StreamEvent | None:
        event, data = self._event, self._data
        self._event, self._data = None, []
        if not data:
            return None
        return StreamEvent(event, decode_data("\n".join(data)))


def parse_sse(text: str) -> list[StreamEvent]:
    """Parse a whole SSE stream into events, data decoded as JSON when it is JSON."""
    decoder = SSEDecoder()
    events = []
    for line in _LINE_BREAK.split(text):
        event = decoder.line(line)
        if event is not None:
            events.append(event)
    events.extend(decoder.close())
    return events


def encode_data(data: Any) -> str:
    """Return the text of an event's data: compact JSON, or a plain string as it is.

    A string that would read back as something else (it parses as JSON, or holds
    a CR that would split its line) is written as a JSON string instead.
    """
    if isinstance(data, str) and "\r" not in data and not _is_json(data):
        return data
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def format_sse(events: Iterable[StreamEvent]) -> str:
    """Write events as an SSE stream; `parse_sse(format_sse(events)) == events`."""
    parts = []
    for event in events:
        if event.event is not None:
            if _LINE_BREAK.search(event.event):
                raise ValueError(f"an SSE event name cannot hold a line break: {event.event!r}")
            parts.append(f"event: {event.event}\n")
        for line in encode_data(event.data).split("\n"):
            parts.append(f"data: {line}\n")
        parts.append("\n")
    return "".join(parts)
