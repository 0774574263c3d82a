"""Live HTTP to providers, for `fcreplay record` and the proxy's forwarding: the one way out.

Built on the httpx-API library `clients.flavor.library()` picks (httpx2 when it is
installed, else httpx); the library module is handed over by `clients.httpx_lib` /
`clients.httpx2_lib`, the only modules that import them.
"""

from __future__ import annotations

import codecs
import json
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import fcreplay.strictjson as strictjson
from fcreplay.cassettes.framing import decode as decode_stream
from fcreplay.cassettes.framing import framing_of
from fcreplay.cassettes.redaction import scrub_url
from fcreplay.cassettes.sse import SSEDecoder
from fcreplay.clients.flavor import library
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
        secret_headers: Mapping[str, str],
        timeout: float,
        deadline: float = DEFAULT_LIMITS.request_deadline,
        max_bytes: int = DEFAULT_LIMITS.max_response_bytes,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._shown = scrub_url(self._base_url)
        """The base URL as messages show it: without user-info or key parameters."""
        self._auth = dict(secret_headers)
        """The key's header and any other secret header: sent, never part of the RoundTrip."""
        http = self._http = library().module
        read = min(timeout, deadline)
        self._client = http.Client(timeout=http.Timeout(read, connect=min(read, 10.0)))
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
                answer = _read(response, self._http.RemoteProtocolError, budget)
        except self._http.TimeoutException as exc:
            budget.spend(0)  # a read timeout past the deadline is the deadline's
            raise TransportError("timeout", f"{shown}: timed out ({type(exc).__name__})") from None
        except self._http.ConnectError as exc:
            # Named by host, not URL, so every refused request to one server reads alike.
            reason = _ERRNO.sub("", str(exc)) or type(exc).__name__
            raise TransportError("connection", f"{reason} at {_host(shown)}") from None
        except self._http.TransportError as exc:
            message = str(exc).replace(self._base_url, self._shown)
            raise TransportError("connection", f"{shown}: {message}") from None
        return RoundTrip(request.method, url, dict(request.headers), request.body, answer)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


_ERRNO = re.compile(r"^\[Errno -?\d+\]\s*")


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


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


def _read(response: Any, cut: type[Exception], budget: _Budget) -> WireResponse:
    """Read a whole answer within `budget`; `cut` is the library's error for a stream the
    server cut."""
    headers = {name.lower(): value for name, value in response.headers.items()}
    text = codecs.getincrementaldecoder(response.encoding or "utf-8")(errors="replace")
    framing = framing_of(headers.get("content-type", ""))
    if framing in ("ndjson", "aws-eventstream") and 200 <= response.status_code < 300:
        chunks: list[bytes] = []
        with suppress(cut):  # a cut stream: the events that arrived whole are kept
            for chunk in response.iter_bytes():
                budget.spend(len(chunk))
                chunks.append(chunk)
        found = decode_stream(framing, b"".join(chunks))
        return WireResponse(response.status_code, headers, None, found)
    if framing == "sse" and 200 <= response.status_code < 300:
        decoder = SSEDecoder()
        events: list[StreamEvent] = []
        try:
            for chunk in response.iter_bytes():
                budget.spend(len(chunk))
                events.extend(decoder.feed(text.decode(chunk)))
        except cut:
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


@dataclass(frozen=True)
class UpstreamHead:
    """The status line and headers of a forwarded request's answer, before its body."""

    status: int
    headers: dict[str, str]
    """Lower-case names; the body is handed over decoded, so the encoding headers are gone."""


_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)
"""Request headers that describe one connection, not the request; httpx sets its own."""
_BODY_FRAMING = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection"})
"""Answer headers that describe bytes the forwarder has already decoded."""


class Forwarder:
    """Forwards requests to any upstream URL as they came, and hands the answer back as it
    arrives (a proxy's transport); thread-safe, one connection pool for all upstreams."""

    def __init__(self, *, timeout: float) -> None:
        http = self._http = library().module
        self._client = http.Client(
            timeout=http.Timeout(timeout, connect=min(timeout, 10.0)), follow_redirects=False
        )

    @contextmanager
    def open(
        self, method: str, url: str, headers: Mapping[str, str], content: bytes | None
    ) -> Iterator[tuple[UpstreamHead, Iterator[bytes]]]:
        """Send a request; yield the answer's head and its decoded body, chunk by chunk.

        Raises TransportError when no answer comes; a body cut short ends the chunks
        early (what arrived is kept, as for a stream a provider breaks off).
        """
        sent = {name: value for name, value in headers.items() if name.lower() not in _HOP_BY_HOP}
        # gzip is the encoding httpx always decodes; a client's `br` might not be.
        sent["accept-encoding"] = "gzip, deflate"
        try:
            with self._client.stream(method, url, content=content, headers=sent) as response:
                head = UpstreamHead(
                    response.status_code,
                    {
                        name.lower(): value
                        for name, value in response.headers.items()
                        if name.lower() not in _BODY_FRAMING
                    },
                )
                broken = (
                    self._http.RemoteProtocolError,
                    self._http.ReadError,
                    self._http.ReadTimeout,
                )
                yield head, _chunks(response, broken)
        except self._http.TimeoutException as exc:
            raise TransportError("timeout", f"{url}: timed out ({type(exc).__name__})") from None
        except self._http.TransportError as exc:
            raise TransportError("connection", f"{url}: {exc}") from None

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


def _chunks(response: Any, broken: tuple[type[Exception], ...]) -> Iterator[bytes]:
    """The decoded body; `broken` are the library's errors for a body the upstream cut."""
    try:
        yield from response.iter_bytes()
    except broken:
        return  # the upstream broke the body off: the caller keeps what arrived
