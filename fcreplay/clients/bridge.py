"""Client transports over an httpx-API library (httpx or httpx2) that replay or record traffic.

`ClientLibrary(module, flavor)` is built by `clients.httpx_lib` and
`clients.httpx2_lib`, the only modules that import those libraries; both share
this code because httpx2 keeps httpx's API (`BaseTransport`, `Response`,
`HTTPTransport`...). Its transports subclass the library's own base classes, so
the clients it returns go wherever that library's clients go
(`openai.OpenAI(http_client=...)`, `anthropic.Anthropic`, google-genai's
`HttpOptions(httpx_client=...)`).

Each request is looked up in a `traffic.player.TrafficPlayer`: a recording is
written back in its framing (one chunk per stream event); a request to record
goes through a real `HTTPTransport`, created on first need (so replay never opens
a socket), is read whole, kept, and answered from what was kept, exactly as a
replay would answer it; a request without an answer raises `NoRecordedAnswer`,
whose message is the miss (nearest recording, differences path by path).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from fcreplay.traffic.matching import Miss
from fcreplay.traffic.player import Live, TrafficPlayer
from fcreplay.traffic.wire import ClientRequest, Reply, read_response, reply_of

TRANSPORT_OPTIONS = ("verify", "cert", "trust_env", "http1", "http2", "limits", "proxy")
"""Client options that configure the connection; given to the live transport instead,
since a client with its own transport would ignore them (or, for `proxy`, route
around it)."""


class NoRecordedAnswer(Exception):
    """The cassette holds no answer for a request and the record mode may not fetch one."""

    def __init__(self, miss: Miss) -> None:
        super().__init__(miss.message)
        self.miss = miss


class ClientLibrary:
    """Clients of one httpx-API library whose transport is a TrafficPlayer."""

    def __init__(self, module: ModuleType, flavor: str) -> None:
        self.module = module
        """The library itself (`httpx` or `httpx2`)."""
        self.flavor = flavor
        self._sync = type(
            "FcreplayTransport",
            (module.BaseTransport,),
            {"__init__": _sync_init, "handle_request": _handle, "close": _close},
        )
        self._async = type(
            "FcreplayAsyncTransport",
            (module.AsyncBaseTransport,),
            {"__init__": _sync_init, "handle_async_request": _handle_async, "aclose": _aclose},
        )

    def client(self, player: TrafficPlayer, **kwargs: Any) -> Any:
        """A `Client` of the library whose requests `player` answers; kwargs go to it."""
        options = self._live_options(kwargs)
        return self.module.Client(transport=self._sync(self, player, options), **kwargs)

    def async_client(self, player: TrafficPlayer, **kwargs: Any) -> Any:
        """An `AsyncClient` of the library whose requests `player` answers."""
        options = self._live_options(kwargs)
        return self.module.AsyncClient(transport=self._async(self, player, options), **kwargs)

    def _live_options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        options = {name: kwargs.pop(name) for name in TRANSPORT_OPTIONS if name in kwargs}
        # One connection per recorded request: tests rarely close their SDK clients, and a
        # pooled connection would outlive the test (and its event loop, for async clients).
        options.setdefault("limits", self.module.Limits(max_keepalive_connections=0))
        return options

    def response(self, reply: Reply, *, asynchronous: bool) -> Any:
        """The library's Response for a reply, its body streamed chunk by chunk."""
        chunks = reply.chunks
        if asynchronous:

            async def agen() -> AsyncIterator[bytes]:
                for chunk in chunks:
                    yield chunk

            return self.module.Response(reply.status, headers=reply.headers, content=agen())
        return self.module.Response(reply.status, headers=reply.headers, content=iter(chunks))

    def request_of(self, request: Any, content: bytes) -> ClientRequest:
        """The neutral form of one of the library's requests."""
        return ClientRequest(request.method, str(request.url), dict(request.headers), content)


def _sync_init(self: Any, library: ClientLibrary, player: TrafficPlayer, options: Any) -> None:
    self.library, self.player, self.options, self.live = library, player, options, None


def _answer(self: Any, request: ClientRequest) -> Reply | None:
    """The reply from the cassette, or None when the request must go live."""
    found = self.player.lookup(request)
    if isinstance(found, Miss):
        raise NoRecordedAnswer(found)
    if isinstance(found, Live):
        return None
    return reply_of(found.interaction.response, request.url)


def _handle(self: Any, request: Any) -> Any:
    neutral = self.library.request_of(request, request.read())
    reply = _answer(self, neutral)
    if reply is None:
        if self.live is None:
            self.live = self.library.module.HTTPTransport(**self.options)
        response = self.live.handle_request(request)
        try:
            content = response.read()
        finally:
            response.close()
        reply = _kept(self, neutral, response, content)
    return self.library.response(reply, asynchronous=False)


async def _handle_async(self: Any, request: Any) -> Any:
    neutral = self.library.request_of(request, await request.aread())
    reply = _answer(self, neutral)
    if reply is None:
        if self.live is None:
            self.live = self.library.module.AsyncHTTPTransport(**self.options)
        response = await self.live.handle_async_request(request)
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        reply = _kept(self, neutral, response, content)
    return self.library.response(reply, asynchronous=True)


def _kept(self: Any, request: ClientRequest, response: Any, content: bytes) -> Reply:
    """Keep a live round trip and answer from what was kept, as a replay would."""
    recorded = read_response(response.status_code, dict(response.headers), content, request.url)
    self.player.keep(request, recorded)
    return reply_of(recorded, request.url)


def _close(self: Any) -> None:
    if self.live is not None:
        self.live.close()


async def _aclose(self: Any) -> None:
    if self.live is not None:
        await self.live.aclose()
