"""Where answers come from: the live provider (kept for the cassette), or the cassette.

Every player answers a request with a value: the response, a `Mismatch` when a
replayed request differs from the recorded one (request drift), or `Aborted` when
there is no answer to give (no recording, connection refused). Nothing is raised.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from fcreplay.canonical import same_value
from fcreplay.cassettes.interactions import Interaction, RecordedRequest
from fcreplay.cassettes.redaction import SecretGuard, scrub_headers, scrub_url
from fcreplay.cassettes.unit import PlacedInteraction
from fcreplay.neutral import (
    ATTEMPT_HEADER,
    SIMULATED_LATENCY_HEADER,
    RoundTrip,
    TransportError,
    WireRequest,
    WireResponse,
)
from fcreplay.record import Aborted
from fcreplay.strictjson import exactly_same
from fcreplay.structdiff import Difference, differences


@dataclass(frozen=True)
class Mismatch:
    """The request built now differs from the one recorded at the same place."""

    message: str
    changes: tuple[Difference, ...]
    """Every difference in the body; empty when the method or path already differ."""
    where: str = ""
    """`<cassette> interaction N (step S)`: the recording that no longer matches."""
    recorded_body: Any = None
    sent_body: Any = None
    """The two bodies, for describing the drift in the suite's own terms."""


Answer = WireResponse | Mismatch | Aborted
"""What a player gives back for one request."""


class Transport(Protocol):
    """Sends one request and returns the round trip (HttpTransport, or an in-process fake)."""

    def send(self, request: WireRequest) -> RoundTrip: ...

    def close(self) -> None: ...


class Player(Protocol):
    """Answers the requests of one attempt."""

    def answer(self, request: WireRequest, *, step: int) -> Answer: ...

    def pause(self, seconds: float) -> None:
        """Wait before a retry the provider asked for (replay never waits)."""


class Recorder(Player, Protocol):
    """A player whose exchanges go into the cassette."""

    @property
    def recorded(self) -> list[PlacedInteraction]:
        """The attempt's interactions for its cassette, in order."""


class LivePlayer:
    """Sends requests to the provider and keeps every HTTP round trip."""

    def __init__(
        self,
        transport: Transport,
        attempt: int,
        guard: SecretGuard | None = None,
        secret_headers: tuple[str, ...] = (),
    ) -> None:
        self._transport = transport
        self._attempt = attempt
        self._guard = guard
        self._secret_headers = secret_headers
        self.recorded: list[PlacedInteraction] = []

    def answer(self, request: WireRequest, *, step: int) -> Answer:
        started = time.monotonic()
        numbered = replace(request, headers={**request.headers, ATTEMPT_HEADER: str(self._attempt)})
        try:
            sent = self._transport.send(numbered)
        except TransportError as exc:
            return Aborted(exc.kind, str(exc))
        response = replace(sent.response, latency_ms=_latency(sent.response, started))
        if self._guard is not None:
            # Whatever a secret header carried is refused wherever it turns up later.
            for headers in (sent.request_headers, response.headers):
                for name, value in headers.items():
                    if name.lower() in self._secret_headers:
                        self._guard.add(value)
        secret = self._secret_headers
        interaction = Interaction(
            RecordedRequest(
                sent.method,
                scrub_url(sent.url),
                scrub_headers(sent.request_headers, secret),
                sent.request_body,
            ),
            replace(response, headers=scrub_headers(response.headers, secret)),
        )
        self.recorded.append(
            PlacedInteraction(
                self._attempt, step, interaction, request.body_sha256, response.latency_ms
            )
        )
        return response

    def pause(self, seconds: float) -> None:
        time.sleep(seconds)


class ReplayPlayer:
    """Answers from one attempt's recorded interactions, in order, checking each request."""

    def __init__(
        self, placed: Sequence[PlacedInteraction], *, cassette: Path, record_hint: str
    ) -> None:
        self._placed = list(placed)
        self._next = 0
        self._cassette = cassette
        self._hint = record_hint
        self.last: PlacedInteraction | None = None
        """The interaction the latest exchange was answered from."""

    @property
    def answered(self) -> int:
        """Requests answered from the recording so far."""
        return self._next

    def answer(self, request: WireRequest, *, step: int) -> Answer:
        if self._next >= len(self._placed):
            return Aborted(
                "missing_interaction",
                f"{self._cassette} has no recorded answer for this request (step {step}); "
                f"record it with `{self._hint}`",
            )
        placed = self._placed[self._next]
        self._next += 1
        self.last = placed
        recorded = placed.interaction.request
        recorded_path = _path_and_query(recorded.uri)
        if recorded.method != request.method or not recorded_path.endswith(request.path):
            return Mismatch(
                f"request drift at {self._where(placed)}: recorded {recorded.method} "
                f"{recorded_path}, now {request.method} {request.path}",
                (),
            )
        if not _same_request(placed, request):
            where = self._where(placed)
            changes = differences(recorded.body, request.body)
            shown = ", ".join(change.path or "/" for change in changes[:5])
            return Mismatch(
                f"request drift at {where}: the body differs at {shown}"
                + (f" and {len(changes) - 5} more" if len(changes) > 5 else ""),
                tuple(changes),
                where,
                recorded.body,
                request.body,
            )
        # The latency is the recorded one: a replay reports what recording measured.
        response = placed.interaction.response
        if placed.latency_ms is None:
            return response
        # What `dataclasses.replace` makes, without its field-by-field walk (every answer).
        return WireResponse(
            response.status, response.headers, response.body, response.events, placed.latency_ms
        )

    def _where(self, placed: PlacedInteraction) -> str:
        """The interaction answered last, as a drift names it."""
        return f"{self._cassette} interaction {self._next - 1} (step {placed.step})"

    def pause(self, seconds: float) -> None:
        """Replay never waits: the recorded retry already happened."""


class NewEpisodesPlayer:
    """Replays recorded interactions while they match, then goes live (`new_episodes`)."""

    def __init__(self, replay: ReplayPlayer, live: LivePlayer) -> None:
        self._replay = replay
        self._live = live
        self._live_now = False
        self._replayed: list[PlacedInteraction] = []

    @property
    def recorded(self) -> list[PlacedInteraction]:
        """The interactions this attempt ends up with: those replayed, then those recorded."""
        return self._replayed + self._live.recorded

    @property
    def counts(self) -> tuple[int, int]:
        """(requests sent live, requests answered from the cassette)."""
        return len(self._live.recorded), len(self._replayed)

    def answer(self, request: WireRequest, *, step: int) -> Answer:
        if not self._live_now:
            answer = self._replay.answer(request, step=step)
            if isinstance(answer, WireResponse):
                assert self._replay.last is not None
                self._replayed.append(self._replay.last)
                return answer
            self._live_now = True
        return self._live.answer(request, step=step)

    def pause(self, seconds: float) -> None:
        if self._live_now:
            self._live.pause(seconds)


class MissingCassettePlayer:
    """Stands for a unit replayed without a cassette: every request goes unanswered."""

    def __init__(self, cassette: Path, record_hint: str) -> None:
        self._reason = f"no cassette {cassette}; record it with `{record_hint}`"

    def answer(self, request: WireRequest, *, step: int) -> Answer:
        return Aborted("missing_cassette", self._reason)

    def pause(self, seconds: float) -> None:
        """Nothing to wait for."""


def _latency(response: WireResponse, started: float) -> int:
    declared = response.headers.get(SIMULATED_LATENCY_HEADER)
    if declared is not None and declared.isdigit():
        return int(declared)
    return round((time.monotonic() - started) * 1000)


def _same_request(placed: PlacedInteraction, request: WireRequest) -> bool:
    """Whether the rebuilt request's body is the recorded one.

    Nearly every replayed request matches, so the common case must be cheap: equal
    exact JSON bytes (`exactly_same`: `==` at C speed, which passes over the tool list
    both sides hold as one object, then the other members written; exact, it tells
    `true` from `1`, `1.0` from `1` and key orders apart, unlike `==` alone). Any other
    case (keys reordered, `1.0` for `1`) gets the canonical comparison.
    """
    recorded = placed.interaction.request.body
    if exactly_same(recorded, request.body):
        if placed.request_sha256 is not None:
            request.assume_sha256(placed.request_sha256)
        return True
    return same_value(recorded, request.body)


def _path_and_query(uri: str) -> str:
    known = _PATHS.get(uri)
    if known is None:
        # Split once per address: a suite's requests go to a few.
        parts = urlsplit(uri)
        known = parts.path + (f"?{parts.query}" if parts.query else "")
        if len(_PATHS) >= 1024:
            _PATHS.clear()
        _PATHS[uri] = known
    return known


_PATHS: dict[str, str] = {}
