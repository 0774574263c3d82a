"""Live HTTP to providers, for `fcreplay record` and the proxy's forwarding: the one way out.

Built on the httpx-API library `clients.flavor.library()` picks (httpx2 when it is
installed, else httpx); the library module is handed over by `clients.httpx_lib` /
`clients.httpx2_lib`, the only modules that import them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from fcreplay.cassettes.sse import SSEDecoder
from fcreplay.clients.flavor import library
from fcreplay.neutral import RoundTrip, StreamEvent, TransportError, WireRequest, WireResponse


class HttpTransport:
    """Sends WireRequests to one base URL; thread-safe, one connection pool per target."""

    def __init__(
        self,
        base_url: str,
        *,
        auth_header: tuple[str, str] | None,
        timeout: float,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._auth = dict([auth_header]) if auth_header else {}
        http = self._http = library().module
        self._client = http.Client(timeout=http.Timeout(timeout, connect=min(timeout, 10.0)))

    def send(self, request: WireRequest) -> RoundTrip:
        """Send one request and read the whole answer (every event of a stream)."""
        url = self._base_url + request.path
        content = json.dumps(request.body, ensure_ascii=False).encode("utf-8")
        headers = {**request.headers, **self._auth}
        try:
            with self._client.stream(
                request.method, url, content=content, headers=headers
            ) as response:
                answer = _read(response, self._http.RemoteProtocolError)
        except self._http.TimeoutException as exc:
            raise TransportError("timeout", f"{url}: timed out ({type(exc).__name__})") from None
        except self._http.ConnectError as exc:
            # Named by host, not URL, so every refused request to one server reads alike.
            reason = _ERRNO.sub("", str(exc)) or type(exc).__name__
            raise TransportError("connection", f"{reason} at {_host(url)}") from None
        except self._http.TransportError as exc:
            raise TransportError("connection", f"{url}: {exc}") from None
        return RoundTrip(request.method, url, dict(request.headers), request.body, answer)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


_ERRNO = re.compile(r"^\[Errno -?\d+\]\s*")


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


def _read(response: Any, cut: type[Exception]) -> WireResponse:
    """Read a whole answer; `cut` is the library's error for a stream the server cut."""
    headers = {name.lower(): value for name, value in response.headers.items()}
    is_stream = headers.get("content-type", "").startswith("text/event-stream")
    if is_stream and 200 <= response.status_code < 300:
        decoder = SSEDecoder()
        events: list[StreamEvent] = []
        try:
            for line in response.iter_lines():
                event = decoder.line(line)
                if event is not None:
                    events.append(event)
        except cut:
            # The server cut the stream: keep what arrived, the adapter judges it.
            pass
        events.extend(decoder.close())
        return WireResponse(response.status_code, headers, None, tuple(events))
    text = response.read().decode(response.encoding or "utf-8", errors="replace")
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
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
