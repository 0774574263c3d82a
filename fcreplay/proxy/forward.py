"""Answers on the wire: the upstream's passed through as it arrives, or a recorded one replayed.

An upstream answer is recorded while it passes through; a recorded answer is
written back with its original event framing.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

from fcreplay.cassettes.bodies import is_json_array_stream
from fcreplay.cassettes.interactions import RecordedResponse
from fcreplay.cassettes.sse import SSEDecoder, decode_data, format_sse
from fcreplay.engine.transport import Forwarder, UpstreamHead
from fcreplay.exchange import StreamEvent
from fcreplay.proxy.http import OutgoingReply

Finish = Callable[[RecordedResponse], None]
"""Called with the whole recorded answer once it has arrived, before the client gets its end."""

_DERIVED = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection"})
"""Headers about the bytes of the original answer; a replay writes its own."""


def forward(
    forwarder: Forwarder,
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes | None,
    finish: Finish,
) -> OutgoingReply:
    """Send the request upstream and answer with what comes back.

    A stream (SSE, or Gemini's JSON-array stream) is passed through chunk by chunk
    as it arrives; any other answer is read whole. `finish` gets the recorded
    answer when it is complete; a stream the client abandons is not finished and
    not recorded. Raises TransportError when the upstream gives no answer.
    """
    stack = ExitStack()
    head, chunks = stack.enter_context(forwarder.open(method, url, headers, body))
    try:
        streamed = _is_stream(head, url)
        if not streamed:
            data = b"".join(chunks)
            stack.close()
            finish(RecordedResponse(head.status, head.headers, _body(data)))
            return OutgoingReply(head.status, head.headers, data)
    except BaseException:
        stack.close()
        raise
    return OutgoingReply(
        head.status, head.headers, chunks=_passthrough(stack, head, chunks, url, finish)
    )


def _is_stream(head: UpstreamHead, url: str) -> bool:
    if not 200 <= head.status < 300:
        return False
    if head.headers.get("content-type", "").startswith("text/event-stream"):
        return True
    return is_json_array_stream(url)


def _passthrough(
    stack: ExitStack, head: UpstreamHead, chunks: Iterator[bytes], url: str, finish: Finish
) -> Iterator[bytes]:
    with stack:
        if head.headers.get("content-type", "").startswith("text/event-stream"):
            decoder = SSEDecoder()
            text = codecs.getincrementaldecoder("utf-8")(errors="replace")
            events: list[StreamEvent] = []
            for chunk in chunks:
                events += decoder.feed(text.decode(chunk))
                yield chunk
            events += decoder.feed(text.decode(b"", final=True))
            events += decoder.close()
            finish(RecordedResponse(head.status, head.headers, None, tuple(events)))
            return
        parts: list[bytes] = []
        for chunk in chunks:
            parts.append(chunk)
            yield chunk
        finish(_array_stream(head, b"".join(parts)))


def _array_stream(head: UpstreamHead, data: bytes) -> RecordedResponse:
    body = _body(data)
    if isinstance(body, list):
        return RecordedResponse(
            head.status, head.headers, None, tuple(StreamEvent(None, e) for e in body)
        )
    return RecordedResponse(head.status, head.headers, body)  # cut short: kept as text


def _body(data: bytes) -> Any:
    if not data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    return decode_data(text)


def replayed(response: RecordedResponse, uri: str, extra: dict[str, str]) -> OutgoingReply:
    """A recorded answer written back: each stream event its own chunk, as it was framed."""
    headers = {k: v for k, v in response.headers.items() if k not in _DERIVED} | extra
    if response.events is None:
        return OutgoingReply(response.status, headers, body_bytes(response.body))
    events = response.events
    if is_json_array_stream(uri) and all(event.event is None for event in events):
        headers.setdefault("content-type", "application/json; charset=UTF-8")
        texts = [json.dumps(event.data, ensure_ascii=False) for event in events]
        pieces = [("[" if i == 0 else ",\r\n") + t for i, t in enumerate(texts)] or ["["]
        chunks = [piece.encode("utf-8") for piece in pieces] + [b"]"]
        return OutgoingReply(response.status, headers, chunks=chunks)
    headers.setdefault("content-type", "text/event-stream")
    chunks = [format_sse([event]).encode("utf-8") for event in events]
    return OutgoingReply(response.status, headers, chunks=chunks)


def body_bytes(body: Any) -> bytes:
    """A recorded body as the bytes to send: text and bytes as they are, JSON compact."""
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
