"""What the proxy does with one request: choose its cassette, then replay, or forward and record.

Every finished request is told to the journal; every failure becomes a
provider-shaped error answer, never an exception.
"""

from __future__ import annotations

import gc
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fcreplay.adapters.protocol import ServerAdapter
from fcreplay.adapters.registry import get_adapter
from fcreplay.cassettes.interactions import Interaction, RecordedRequest
from fcreplay.decision import ProviderError
from fcreplay.engine.transport import Forwarder, UpstreamHead
from fcreplay.errors import InputError, SecretLeakError
from fcreplay.neutral import TransportError
from fcreplay.proxy.forward import forward
from fcreplay.proxy.http import IncomingRequest, OutgoingReply
from fcreplay.proxy.routes import Destination, RouteTable
from fcreplay.proxy.selection import CASSETTE_HEADER, Choice, Selector
from fcreplay.traffic.cassette import traffic_meta
from fcreplay.traffic.matching import Miss
from fcreplay.traffic.player import Live, RecordMode, Replayed, TrafficPlayer
from fcreplay.traffic.wire import ClientRequest, read_response, reply_of

PROXY_HEADER = "x-fcreplay-proxy"
"""Header on every answer: `replayed`, `recorded`, `miss` or `error`."""
MISS_STATUS = 400
"""Status of a request with no recorded answer: one that no SDK retries."""
MISS_TYPE = "fcreplay_no_recording"
REPLAY_ORIGIN = "http://127.0.0.1"
"""The origin a request is taken to go to when no upstream is configured (replay only):
matching compares paths, never hosts."""

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
    """The request as a cassette keeps it (no credentials)."""
    interaction: Interaction | None
    """The request with the answer it got; None for a miss or the proxy's own error."""
    message: str | None
    """What went wrong, for a miss or an error."""
    elapsed_ms: int
    secrets: tuple[str, ...] = ()
    """The credentials the client sent: whatever the journal writes must not hold them."""
    miss: Miss | None = None
    """Why a request got no recorded answer."""
    body_text: str | None = None
    """The recorded request body's sorted JSON when matching took it (`Replayed.body_text`)."""


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
        self,
        settings: ProxySettings,
        forwarder: Forwarder | None,
        journal: Journal,
        *,
        freeze: bool = False,
    ) -> None:
        """`freeze`: the process is the proxy's own (the CLI), so the service may tune its
        garbage collector (see `_player`); an embedding's collector is left alone."""
        self.settings = settings
        self._forwarder = forwarder
        self._journal = journal
        self._players: dict[Path, TrafficPlayer] = {}
        self._lock = threading.Lock()
        self._freeze = freeze
        self._frozen = False
        self.refused: list[str] = []
        """Why exchanges were not written: the cassette would have held a credential."""

    def handle(self, incoming: IncomingRequest) -> OutgoingReply:
        """Answer one request (never raises for anything the client or upstream did)."""
        started = time.monotonic()
        choice = self.settings.selector.choose(incoming.target, incoming.headers)
        if isinstance(choice, str):
            adapter = self.settings.routes.resolve(incoming.target).adapter
            return _error_reply(adapter, 400, f"fcreplay proxy: {choice}", "error")
        destination = self.settings.routes.resolve(choice.target)
        sent = {k: v for k, v in incoming.headers.items() if k != CASSETTE_HEADER}
        # The cassette's copy: credentials still in (the player collects them to refuse
        # them in the file, and leaves them out of it), the noisy headers not.
        request = ClientRequest(
            incoming.method,
            destination.url or REPLAY_ORIGIN + destination.path,
            _kept(sent),
            incoming.body or b"",
        )
        recorded = request.recorded()
        secrets = request.credentials()

        def finished(
            how: str,
            interaction: Interaction | None,
            message: str | None,
            miss: Miss | None = None,
            body_text: str | None = None,
        ) -> None:
            elapsed = int((time.monotonic() - started) * 1000)
            outcome = Outcome(
                choice,
                destination,
                how,
                recorded,
                interaction,
                message,
                elapsed,
                secrets,
                miss,
                body_text,
            )
            self._journal.note(outcome)

        try:
            player = self._player(choice)
        except InputError as exc:
            finished("error", None, str(exc))
            return _error_reply(destination.adapter, 500, f"fcreplay proxy: {exc}", "error")
        found = player.lookup(request)
        if isinstance(found, Replayed):
            finished("replayed", found.interaction, None, body_text=found.body_text)
            recorded_reply = reply_of(found.interaction.response, found.interaction.request.uri)
            headers = recorded_reply.headers | {PROXY_HEADER: "replayed"}
            if found.interaction.response.events is None:
                return OutgoingReply(recorded_reply.status, headers, recorded_reply.content)
            return OutgoingReply(recorded_reply.status, headers, chunks=recorded_reply.chunks)
        if isinstance(found, Miss):
            finished("miss", None, found.message, found)
            text = f"fcreplay proxy: {choice.path}: {found.message} (record mode {player.mode})"
            return _error_reply(destination.adapter, MISS_STATUS, text, "miss", MISS_TYPE)
        assert isinstance(found, Live)
        if destination.url is None or self._forwarder is None:
            message = (
                f"no upstream for {incoming.method} {destination.path.split('?', 1)[0]}: start "
                "the proxy with --upstream URL (or --upstream ADAPTER=URL, --route /PREFIX=URL)"
            )
            finished("error", None, message)
            return _error_reply(destination.adapter, 502, f"fcreplay proxy: {message}", "error")
        url = destination.url

        def record(head: UpstreamHead, content: bytes) -> None:
            response = read_response(head.status, head.headers, content, url)
            interaction = Interaction(recorded, response)
            try:
                player.keep(request, response)
                player.save()
            except SecretLeakError as exc:
                self.refused.append(str(exc))
                finished("error", interaction, f"refused: {exc}")
                return
            finished("recorded", interaction, None)

        try:
            reply = forward(self._forwarder, incoming.method, url, sent, incoming.body, record)
        except TransportError as exc:
            finished("error", None, str(exc))
            message = f"fcreplay proxy: upstream: {exc}"
            return _error_reply(destination.adapter, 502, message, "error")
        headers = reply.headers | {PROXY_HEADER: "recorded"}
        return OutgoingReply(reply.status, headers, reply.body, reply.chunks)

    def _player(self, choice: Choice) -> TrafficPlayer:
        with self._lock:
            player = self._players.get(choice.path)
            if player is None:
                meta = traffic_meta(self.settings.target, choice.name)
                player = TrafficPlayer(choice.path, meta, self.settings.mode)
                self._players[choice.path] = player
                if self._freeze:
                    # A player lives as long as the proxy and its cassette's values hold
                    # no cycles: frozen, they are not walked again by every full collection
                    # (a quarter of a replay's time once a few hundred cassettes are
                    # loaded). What garbage is frozen with them waits for `close`.
                    gc.freeze()
                    self._frozen = True
            return player

    def close(self) -> None:
        """Hand what the proxy froze back to the collector."""
        with self._lock:
            if self._frozen:
                gc.unfreeze()
            self._frozen = False


def _kept(headers: dict[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in headers.items()
        if name not in _UNRECORDED_HEADERS and not name.startswith("x-stainless-")
    }


def _error_reply(
    adapter: str | None, status: int, message: str, how: str, kind: str = "fcreplay_proxy"
) -> OutgoingReply:
    headers = {"content-type": "application/json", PROXY_HEADER: how}
    server = None if adapter is None else get_adapter(adapter)
    body: object = {"error": {"message": message, "type": kind}}
    # An adapter with a server part writes the error in its provider's envelope, so the
    # client's SDK raises its usual error class with the message.
    if isinstance(server, ServerAdapter):
        wire = server.render_error(ProviderError(status, kind, None, message, False))
        status, body = wire.status, wire.body
        headers |= {k.lower(): v for k, v in wire.headers.items()}
    return OutgoingReply(status, headers, json.dumps(body, ensure_ascii=False).encode("utf-8"))
