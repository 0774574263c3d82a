"""Live HTTP to providers through httpx: the only module that opens network connections."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

import httpx

from fcreplay.cassettes.sse import SSEDecoder
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
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)))

    def send(self, request: WireRequest) -> RoundTrip:
        """Send one request and read the whole answer (every event of a stream)."""
        url = self._base_url + request.path
        content = json.dumps(request.body, ensure_ascii=False).encode("utf-8")
        headers = {**request.headers, **self._auth}
        try:
            with self._client.stream(
                request.method, url, content=content, headers=headers
            ) as response:
                answer = _read(response)
        except httpx.TimeoutException as exc:
            raise TransportError("timeout", f"{url}: timed out ({type(exc).__name__})") from None
        except httpx.ConnectError as exc:
            # Named by host, not URL, so every refused request to one server reads alike.
            reason = _ERRNO.sub("", str(exc)) or type(exc).__name__
            raise TransportError("connection", f"{reason} at {_host(url)}") from None
        except httpx.TransportError as exc:
            raise TransportError("connection", f"{url}: {exc}") from None
        return RoundTrip(request.method, url, dict(request.headers), request.body, answer)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


_ERRNO = re.compile(r"^\[Errno -?\d+\]\s*")


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


def _read(response: httpx.Response) -> WireResponse:
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
        except httpx.RemoteProtocolError:
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
