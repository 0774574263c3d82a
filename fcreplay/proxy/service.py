"""What the proxy does with one request: choose its cassette, then replay, or forward and record.

Every finished request is told to the journal; every failure becomes a
provider-shaped error answer, never an exception.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

from fcreplay.adapters import get_adapter
from fcreplay.cassettes.interactions import Interaction, RecordedRequest, RecordedResponse
from fcreplay.cassettes.redaction import (
    SECRET_HEADERS,
    SECRET_QUERY_KEYS,
    scrub_headers,
    scrub_url,
)
from fcreplay.cassettes.sse import decode_data
from fcreplay.cassettes.store import CassetteMeta
from fcreplay.decision import ProviderError
from fcreplay.engine.transport import Forwarder
from fcreplay.errors import InputError, SecretLeakError
from fcreplay.exchange import TransportError
from fcreplay.proxy.forward import body_bytes, forward, replayed
from fcreplay.proxy.http import IncomingRequest, OutgoingReply
from fcreplay.proxy.routes import Destination, RouteTable
from fcreplay.proxy.selection import CASSETTE_HEADER, Choice, Selector
from fcreplay.proxy.tape import Miss, RecordMode, RequestKey, Tape

PROXY_HEADER = "x-fcreplay-proxy"
"""Header on every answer: `replayed`, `recorded`, `miss` or `error`."""
MISS_STATUS = 400
"""Status of a request with no recorded answer: one that no SDK retries."""
MISS_TYPE = "fcreplay_no_recording"

_UNRECORDED_HEADERS = frozenset(
    {
        CASSETTE_HEADER,
        "user-agent",
        "accept",
        "accept-encoding",
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
    }
)
"""Client headers left out of the cassette: per machine, per SDK version or per connection
(the SDKs' `x-stainless-*` telemetry too), they would make every re-recording a noisy diff."""


@dataclass(frozen=True)
class Outcome:
    """One finished request, as the journal hears of it."""

    cassette: Choice
    destination: Destination
    how: str
    """`replayed`, `recorded`, `miss` or `error`."""
    request: RecordedRequest
    response: RecordedResponse | None
    """None for a miss or an error of the proxy's own."""
    message: str | None
    """What went wrong, for a miss or an error."""
    elapsed_ms: int


class Journal(Protocol):
    """Hears of every finished request (the exchange log and the run log)."""

    def note(self, outcome: Outcome) -> None: ...


@dataclass(frozen=True)
class ProxySettings:
    """How the proxy chooses cassettes, routes requests and records."""

    selector: Selector
    routes: RouteTable
    mode: RecordMode
    target: str
    """The name cassettes and run-log records give the client's traffic."""


class ProxyService:
    """Answers requests for the HTTP server; thread-safe."""

    def __init__(
        self, settings: ProxySettings, forwarder: Forwarder | None, journal: Journal
    ) -> None:
        self.settings = settings
        self._forwarder = forwarder
        self._journal = journal
        self._tapes: dict[Path, Tape] = {}
        self._lock = threading.Lock()
        self.refused: list[str] = []
        """Exchanges not written because the cassette would have held a credential."""

    def handle(self, incoming: IncomingRequest) -> OutgoingReply:
        """Answer one request (never raises for anything the client or upstream did)."""
        started = time.monotonic()
        choice = self.settings.selector.choose(incoming.target, incoming.headers)
        if isinstance(choice, str):
            adapter = self.settings.routes.resolve(incoming.target).adapter
            return _error_reply(adapter, 400, f"fcreplay proxy: {choice}", "error")
        destination = self.settings.routes.resolve(choice.target)
        body = _decoded(incoming.body)
        recorded = RecordedRequest(
            incoming.method,
            scrub_url(destination.url or destination.path),
            _kept_headers(incoming.headers),
            body,
        )

        def finished(how: str, response: RecordedResponse | None, message: str | None) -> None:
            elapsed = int((time.monotonic() - started) * 1000)
            self._journal.note(
                Outcome(choice, destination, how, recorded, response, message, elapsed)
            )

        try:
            tape = self._tape(choice)
        except InputError as exc:
            finished("error", None, str(exc))
            return _error_reply(destination.adapter, 500, f"fcreplay proxy: {exc}", "error")
        key = RequestKey.of(incoming.method, destination.path, body)
        miss: Miss | None = None
        if tape.replays:
            answer = tape.play(key)
            if isinstance(answer, RecordedResponse):
                finished("replayed", answer, None)
                return replayed(answer, recorded.uri, {PROXY_HEADER: "replayed"})
            miss = answer
        if not tape.records:
            assert miss is not None
            finished("miss", None, miss.message)
            text = f"fcreplay proxy: {miss.message} (record mode {tape.mode})"
            return _error_reply(destination.adapter, MISS_STATUS, text, "miss", MISS_TYPE)
        if destination.url is None or self._forwarder is None:
            message = (
                f"no upstream for {key.describe()}: start the proxy with --upstream URL "
                "(or --upstream ADAPTER=URL, --route /PREFIX=URL)"
            )
            finished("error", None, message)
            return _error_reply(destination.adapter, 502, f"fcreplay proxy: {message}", "error")
        secrets = _credentials(incoming)

        def record(response: RecordedResponse) -> None:
            try:
                tape.add(
                    Interaction(recorded, _recorded_response(response)),
                    secrets,
                    destination.adapter,
                )
            except SecretLeakError as exc:
                self.refused.append(str(exc))
                finished("error", response, f"refused: {exc}")
                return
            finished("recorded", response, None)

        headers = {k: v for k, v in incoming.headers.items() if k != CASSETTE_HEADER}
        try:
            reply = forward(
                self._forwarder, incoming.method, destination.url, headers, incoming.body, record
            )
        except TransportError as exc:
            finished("error", None, str(exc))
            return _error_reply(
                destination.adapter, 502, f"fcreplay proxy: upstream: {exc}", "error"
            )
        return OutgoingReply(
            reply.status, reply.headers | {PROXY_HEADER: "recorded"}, reply.body, reply.chunks
        )

    def _tape(self, choice: Choice) -> Tape:
        with self._lock:
            tape = self._tapes.get(choice.path)
            if tape is None:
                meta = CassetteMeta(
                    target=self.settings.target, adapter="", variant="proxy", case_id=choice.name
                )
                tape = self._tapes[choice.path] = Tape(choice.path, self.settings.mode, meta)
            return tape


def _decoded(body: bytes | None) -> object:
    if not body:
        return None
    try:
        return decode_data(body.decode("utf-8"))
    except UnicodeDecodeError:
        return body


def _kept_headers(headers: dict[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in scrub_headers(headers).items()
        if name not in _UNRECORDED_HEADERS and not name.startswith("x-stainless-")
    }


def _recorded_response(response: RecordedResponse) -> RecordedResponse:
    return RecordedResponse(
        response.status, scrub_headers(response.headers), response.body, response.events
    )


def _credentials(incoming: IncomingRequest) -> list[str]:
    """The credential values the client sent: they go upstream, never into a file."""
    found: list[str] = []
    for name, value in incoming.headers.items():
        if name in SECRET_HEADERS:
            found.append(value)
            scheme, _, rest = value.partition(" ")
            if rest and scheme.lower() in ("bearer", "basic", "token"):
                found.append(rest.strip())
    query = urlsplit(incoming.target).query
    found += [v for k, v in parse_qsl(query) if k.lower() in SECRET_QUERY_KEYS]
    return found


def _error_reply(
    adapter: str | None, status: int, message: str, how: str, kind: str = "fcreplay_proxy"
) -> OutgoingReply:
    headers = {"content-type": "application/json", PROXY_HEADER: how}
    if adapter is None:
        body = {"error": {"message": message, "type": kind}}
        return OutgoingReply(status, headers, body_bytes(body))
    error = ProviderError(status, kind, None, message, retryable=False)
    wire = get_adapter(adapter).render_error(error)
    return OutgoingReply(
        wire.status,
        {**headers, **{k.lower(): v for k, v in wire.headers.items()}},
        body_bytes(wire.body),
    )
