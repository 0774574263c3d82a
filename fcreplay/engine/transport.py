"""Live HTTP to providers through httpx: the only module that opens network connections."""

from __future__ import annotations

import codecs
import json
import time
from typing import Any

import httpx

import fcreplay.strictjson as strictjson
from fcreplay.cassettes.redaction import scrub_url
from fcreplay.cassettes.sse import SSEDecoder
from fcreplay.limits import DEFAULT_LIMITS
from fcreplay.neutral import RoundTrip, StreamEvent, TransportError, WireRequest, WireResponse


class HttpTransport:
    """Sends WireRequests to one base URL; thread-safe, one connection pool per target.

    `timeout` bounds each read; `deadline` bounds the whole request, checked each
    time bytes arrive, so a server that trickles keep-alives cannot hold a run
    forever; `max_bytes` bounds the answer, which is never held past it.
    """

    def __init__(
        self,
        base_url: str,
        *,
        auth_header: tuple[str, str] | None,
        timeout: float,
        deadline: float = DEFAULT_LIMITS.request_deadline,
        max_bytes: int = DEFAULT_LIMITS.max_response_bytes,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._shown = scrub_url(self._base_url)
        """The base URL as messages show it: without user-info or key parameters."""
        self._auth = dict([auth_header]) if auth_header else {}
        read = min(timeout, deadline)
        self._client = httpx.Client(timeout=httpx.Timeout(read, connect=min(read, 10.0)))
        self._deadline = deadline
        self._max_bytes = max_bytes

    def send(self, request: WireRequest) -> RoundTrip:
        """Send one request and read the whole answer (every event of a stream)."""
        url = self._base_url + request.path
        shown = self._shown + request.path
        content = json.dumps(request.body, ensure_ascii=False).encode("utf-8")
        headers = {**request.headers, **self._auth}
        budget = _Budget(shown, time.monotonic() + self._deadline, self._deadline, self._max_bytes)
        try:
            with self._client.stream(
                request.method, url, content=content, headers=headers
            ) as response:
                budget.spend(0)
                answer = _read(response, budget)
        except httpx.TimeoutException as exc:
            budget.spend(0)  # a read timeout past the deadline is the deadline's
            raise TransportError("timeout", f"{shown}: timed out ({type(exc).__name__})") from None
        except httpx.TransportError as exc:
            message = str(exc).replace(self._base_url, self._shown)
            raise TransportError("connection", f"{shown}: {message}") from None
        return RoundTrip(request.method, url, dict(request.headers), request.body, answer)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


class _Budget:
    """What one request may still spend: time until its deadline, bytes until its cap."""

    def __init__(self, url: str, ends: float, seconds: float, max_bytes: int) -> None:
        self._url = url
        self._ends = ends
        self._seconds = seconds
        self._left = max_bytes
        self._max_bytes = max_bytes

    def spend(self, size: int) -> None:
        self._left -= size
        if self._left < 0:
            raise TransportError(
                "too_large",
                f"{self._url}: the answer is larger than {self._max_bytes} bytes (the "
                "max_response_bytes limit); it was cut and not recorded",
            )
        if time.monotonic() > self._ends:
            raise TransportError(
                "deadline",
                f"{self._url}: no complete answer within {self._seconds:g} s (the "
                "request_deadline limit); it was cut and not recorded",
            )


def _read(response: httpx.Response, budget: _Budget) -> WireResponse:
    headers = {name.lower(): value for name, value in response.headers.items()}
    is_stream = headers.get("content-type", "").startswith("text/event-stream")
    text = codecs.getincrementaldecoder(response.encoding or "utf-8")(errors="replace")
    if is_stream and 200 <= response.status_code < 300:
        decoder = SSEDecoder()
        events: list[StreamEvent] = []
        try:
            for chunk in response.iter_bytes():
                budget.spend(len(chunk))
                events.extend(decoder.feed(text.decode(chunk)))
        except httpx.RemoteProtocolError:
            # The server cut the stream: keep what arrived, the adapter judges it.
            pass
        events.extend(decoder.feed(text.decode(b"", final=True)))
        events.extend(decoder.close())
        return WireResponse(response.status_code, headers, None, tuple(events))
    parts: list[str] = []
    for chunk in response.iter_bytes():
        budget.spend(len(chunk))
        parts.append(text.decode(chunk))
    parts.append(text.decode(b"", final=True))
    body_text = "".join(parts)
    try:
        body: Any = strictjson.loads(body_text)
    except ValueError:
        body = body_text
    return WireResponse(response.status_code, headers, body)
