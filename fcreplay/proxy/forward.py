"""Forwarding upstream: the answer passed through as it arrives, and its bytes kept for the record.

A stream (SSE, or Gemini's JSON-array stream) goes to the client chunk by chunk
as the upstream sends it; any other answer is read whole first. Either way the
whole body is handed to `finish` before the client gets the end of the answer,
so a client that has its answer can rely on the cassette being on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

from fcreplay.cassettes.bodies import is_json_array_stream
from fcreplay.engine.transport import Forwarder, UpstreamHead
from fcreplay.proxy.http import OutgoingReply

Finish = Callable[[UpstreamHead, bytes], None]
"""Called with the answer's head and whole (decoded) body once it has all arrived."""


def forward(
    forwarder: Forwarder,
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes | None,
    finish: Finish,
) -> OutgoingReply:
    """Send the request upstream and answer with what comes back.

    A stream the client abandons is not finished (and so not recorded). Raises
    TransportError when the upstream gives no answer.
    """
    stack = ExitStack()
    head, chunks = stack.enter_context(forwarder.open(method, url, headers, body))
    if _is_stream(head, url):
        return OutgoingReply(
            head.status, head.headers, chunks=_passthrough(stack, head, chunks, finish)
        )
    with stack:
        data = b"".join(chunks)
    finish(head, data)
    return OutgoingReply(head.status, head.headers, data)


def _is_stream(head: UpstreamHead, url: str) -> bool:
    if not 200 <= head.status < 300:
        return False
    if head.headers.get("content-type", "").startswith("text/event-stream"):
        return True
    return is_json_array_stream(url)


def _passthrough(
    stack: ExitStack, head: UpstreamHead, chunks: Iterator[bytes], finish: Finish
) -> Iterator[bytes]:
    with stack:
        parts: list[bytes] = []
        for chunk in chunks:
            parts.append(chunk)
            yield chunk
    finish(head, b"".join(parts))
