"""Where answers come from: the live provider (recorded into a cassette) or a cassette."""

from __future__ import annotations

import marshal
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from fcreplay.atomic import write_text_atomically
from fcreplay.canonical import same_value
from fcreplay.cassettes.redaction import refuse_leaks, scrub_headers, scrub_url
from fcreplay.cassettes.store import (
    Cassette,
    CassetteMeta,
    Interaction,
    RecordedRequest,
    RecordedResponse,
    UnreadableInteraction,
    assemble_cassette,
    interaction_text,
    load_cassette,
)
from fcreplay.engine.attempt import AttemptAborted, RequestDrift
from fcreplay.errors import InputError
from fcreplay.exchange import HttpExchange, TransportError, WireRequest, WireResponse
from fcreplay.structdiff import differences


class Transport(Protocol):
    """Sends one request and returns the round trip (HttpTransport, or an in-process fake)."""

    def send(self, request: WireRequest) -> HttpExchange: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Take:
    """A recorded interaction and its place in the run: attempt, step, try."""

    attempt: int
    step: int
    interaction: Interaction
    request_sha256: str | None = None
    """Hash of the request body as recorded (`WireRequest.body_sha256`); a replayed
    request that matches inherits it instead of serializing its body to hash it."""

    @cached_property
    def text(self) -> str:
        """The take as it stands in the cassette's text, serialized once."""
        return interaction_text(replace(self.interaction, label=_label(self)))


class Tape:
    """The cassette of one unit: takes kept from disk plus takes recorded in this run."""

    def __init__(
        self,
        path: Path,
        meta: CassetteMeta,
        takes: Sequence[Take] = (),
        cassette: Cassette | None = None,
    ) -> None:
        self.path = path
        self.meta = meta
        self._takes = list(takes)
        self.cassette = cassette
        """The cassette as read from disk, when it was."""

    @classmethod
    def load(cls, path: Path, meta: CassetteMeta) -> Tape:
        """Read a unit's cassette; a missing file gives an empty tape."""
        if not path.exists():
            return cls(path, meta)
        cassette = load_cassette(path)
        takes = []
        for index, interaction in enumerate(cassette.interactions):
            if isinstance(interaction, UnreadableInteraction):
                raise InputError.at(path, None, f"interaction {index}: {interaction.reason}")
            label = interaction.label or {}
            digest = label.get("request_sha256")
            takes.append(
                Take(
                    int(label.get("attempt", 1)),
                    int(label.get("step", 0)),
                    interaction,
                    digest if isinstance(digest, str) else None,
                )
            )
        return cls(path, meta, takes, cassette)

    @property
    def exists(self) -> bool:
        """Whether the cassette file is on disk."""
        return self.path.exists()

    def takes(self, attempt: int) -> list[Take]:
        """The takes of one attempt, in recorded order."""
        return [take for take in self._takes if take.attempt == attempt]

    def keep_only(self, attempts: Iterable[int]) -> None:
        """Forget the takes of every attempt not listed (they are recorded again)."""
        keep = set(attempts)
        self._takes = [take for take in self._takes if take.attempt in keep]

    def put(self, attempt: int, takes: Sequence[Take]) -> None:
        """Replace the takes of one attempt."""
        self._takes = [take for take in self._takes if take.attempt != attempt] + list(takes)

    def save(self, secrets: Sequence[str]) -> None:
        """Write the cassette atomically, refusing it if it would hold a credential."""
        ordered = sorted(self._takes, key=lambda take: take.attempt)
        text = assemble_cassette(self.meta, [take.text for take in ordered])
        refuse_leaks(text, secrets, where=f"cassette {self.path}")
        write_text_atomically(self.path, text)


class LivePlayer:
    """Sends requests to the provider and keeps every HTTP round trip as a take."""

    def __init__(self, transport: Transport, attempt: int) -> None:
        self._transport = transport
        self._attempt = attempt
        self.takes: list[Take] = []

    def exchange(self, request: WireRequest, *, step: int) -> WireResponse:
        try:
            sent = self._transport.send(request)
        except TransportError as exc:
            raise AttemptAborted(exc.kind, str(exc)) from None
        response = sent.response
        recorded = Interaction(
            RecordedRequest(
                sent.method,
                scrub_url(sent.url),
                scrub_headers(sent.request_headers),
                sent.request_body,
            ),
            RecordedResponse(
                response.status, scrub_headers(response.headers), response.body, response.events
            ),
        )
        self.takes.append(Take(self._attempt, step, recorded, request.body_sha256))
        return response

    def pause(self, seconds: float) -> None:
        time.sleep(seconds)


class ReplayPlayer:
    """Answers from one attempt's recorded takes, in order, checking each request matches."""

    def __init__(self, takes: Sequence[Take], *, cassette: Path, record_hint: str) -> None:
        self._takes = list(takes)
        self._next = 0
        self._cassette = cassette
        self._hint = record_hint
        self.last_take: Take | None = None
        """The take the latest exchange was answered from."""

    @property
    def exhausted(self) -> bool:
        """Whether every recorded take was played."""
        return self._next >= len(self._takes)

    def exchange(self, request: WireRequest, *, step: int) -> WireResponse:
        if self._next >= len(self._takes):
            raise AttemptAborted(
                "missing_interaction",
                f"{self._cassette} has no recorded answer for this request (step {step}); "
                f"record it with `{self._hint}`",
            )
        take = self._takes[self._next]
        self._next += 1
        self.last_take = take
        recorded = take.interaction.request
        where = f"{self._cassette} interaction {self._next - 1} (step {take.step})"
        recorded_path = _path_and_query(recorded.uri)
        if recorded.method != request.method or not recorded_path.endswith(request.path):
            raise RequestDrift(
                f"request drift at {where}: recorded {recorded.method} {recorded_path}, "
                f"now {request.method} {request.path}",
                [],
            )
        if not _same_request(take, request):
            changes = differences(recorded.body, request.body)
            shown = ", ".join(change.path or "/" for change in changes[:5])
            raise RequestDrift(
                f"request drift at {where}: the body differs at {shown}"
                + (f" and {len(changes) - 5} more" if len(changes) > 5 else ""),
                changes,
            )
        response = take.interaction.response
        return WireResponse(response.status, response.headers, response.body, response.events)

    def pause(self, seconds: float) -> None:
        """Replay never waits: the recorded retry already happened."""


class EpisodePlayer:
    """Replays recorded takes while they match, then goes live for the rest (new_episodes)."""

    def __init__(self, replay: ReplayPlayer, live: LivePlayer) -> None:
        self._replay = replay
        self._live = live
        self._live_now = False
        self.played: list[Take] = []

    @property
    def takes(self) -> list[Take]:
        """The takes this attempt ends up with: those replayed, then those recorded."""
        return self.played + self._live.takes

    def exchange(self, request: WireRequest, *, step: int) -> WireResponse:
        if not self._live_now:
            try:
                response = self._replay.exchange(request, step=step)
            except AttemptAborted:
                self._live_now = True
            else:
                assert self._replay.last_take is not None
                self.played.append(self._replay.last_take)
                return response
        return self._live.exchange(request, step=step)

    def pause(self, seconds: float) -> None:
        if self._live_now:
            self._live.pause(seconds)


def _same_request(take: Take, request: WireRequest) -> bool:
    """Whether the rebuilt request's body is the recorded one.

    Nearly every replayed request matches, so the common case must be cheap:
    marshal is C speed and exact (it tells `true` from `1`, unlike `==`), and an
    adapter builds keys in a fixed order, so equal bodies give equal bytes. Any
    other case (keys reordered, `1.0` for `1`) gets the canonical comparison.
    """
    recorded = take.interaction.request.body
    exact = _exact(recorded)
    if exact is not None and exact == _exact(request.body):
        if take.request_sha256 is not None:
            request.assume_sha256(take.request_sha256)
        return True
    return same_value(recorded, request.body)


def _exact(value: Any) -> bytes | None:
    # Version 0 writes values only: later versions also record which strings are
    # interned or shared, which differs between a loaded and a built body.
    try:
        return marshal.dumps(value, 0)
    except ValueError:  # not plain data (an odd cassette): let same_value decide
        return None


def _label(take: Take) -> dict[str, Any]:
    label: dict[str, Any] = {"attempt": take.attempt, "step": take.step}
    if take.request_sha256 is not None:
        label["request_sha256"] = take.request_sha256
    return label


def _path_and_query(uri: str) -> str:
    parts = urlsplit(uri)
    return parts.path + (f"?{parts.query}" if parts.query else "")
