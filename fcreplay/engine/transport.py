"""Live HTTP to providers for `fcreplay record`: the suite's one way onto the network.

Built on the httpx-API library `clients.flavor.library()` picks (httpx2 when it is
installed, else httpx); the library module is handed over by `clients.httpx_lib` /
`clients.httpx2_lib`, the only modules that import them.
"""

from __future__ import annotations

import json
from typing import Any

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
        except self._http.TransportError as exc:
            raise TransportError("connection", f"{url}: {exc}") from None
        return RoundTrip(request.method, url, dict(request.headers), request.body, answer)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


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
