"""Record modes for client traffic, and the player that answers a client's requests.

`TrafficPlayer(path, meta, mode)` opens one cassette. For each request the
client sends, `lookup` returns what to do, as a value:

- `Replayed(interaction)`: answer with this recording (write `traffic.wire.reply_of`);
- `Live()`: send the request to the real server, then hand the response to `keep`;
- `Miss`: nothing recorded answers it and the mode forbids going live.

Modes, with pytest-recording's (vcrpy's) meaning:

- `none`: replay only; a request without a recording is a Miss; nothing is written.
- `once`: a cassette that exists is replayed as in `none`; one that does not is
  recorded (every request live).
- `new_episodes`: recorded requests are replayed, the others go live and are
  appended to the cassette.
- `all`: every request goes live; the cassette is rewritten with this run's traffic.

`save()` writes the cassette when something was recorded (never in replay, so
replayed cassettes stay byte-identical) and returns whether it did. `exchanges`
lists every interaction that answered a request in this run, in order;
`timeline` every request in order, answered (its interaction) or not (its Miss):
what judging (`traffic.judging`) looks at. Thread-safe: one lock guards the state.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fcreplay.cassettes.interactions import Interaction
from fcreplay.cassettes.store import CassetteMeta
from fcreplay.neutral import WireResponse
from fcreplay.traffic.cassette import load_traffic, save_traffic
from fcreplay.traffic.matching import ExactIndex, Match, Miss, find, miss
from fcreplay.traffic.wire import ClientRequest

RecordMode = Literal["none", "once", "new_episodes", "all"]
RECORD_MODES: tuple[RecordMode, ...] = ("none", "once", "new_episodes", "all")
DEFAULT_RECORD_MODE: RecordMode = "none"


def parse_record_mode(value: str) -> RecordMode:
    """A record mode from its name; ValueError lists the valid ones."""
    for mode in RECORD_MODES:
        if value == mode:
            return mode
    raise ValueError(f"record mode {value!r}: expected one of {', '.join(RECORD_MODES)}")


@dataclass(frozen=True)
class Replayed:
    """Answer the request with this recorded interaction."""

    interaction: Interaction
    index: int
    """Its position in the cassette."""
    body_text: str | None = None
    """The recorded request body's sorted JSON when matching took it (see `matching.Match`)."""


@dataclass(frozen=True)
class Live:
    """Send the request to the real server and give the response to `TrafficPlayer.keep`."""


Lookup = Replayed | Live | Miss
"""What `TrafficPlayer.lookup` decides for one request."""


class TrafficPlayer:
    """Replays or records the client traffic of one cassette under one record mode."""

    def __init__(
        self, path: Path, meta: CassetteMeta, mode: RecordMode, *, keep_texts: bool = False
    ) -> None:
        """`keep_texts`: keep `body_texts` for records made from the timeline later (a
        test's); a long-lived player (the proxy's) hands each text on with its answer."""
        self.path = path
        self.meta = meta
        self.mode = mode
        loaded = None if mode == "all" else load_traffic(path)
        self.existed = loaded is not None or path.exists()
        """Whether the cassette was on disk when the player opened it."""
        self._recorded: list[Interaction] = list(loaded or [])
        self._played = [False] * len(self._recorded)
        self._index: ExactIndex | None = None
        self._live = mode == "all" or (mode == "once" and loaded is None)
        self._new: list[Interaction] = []
        self._secrets: set[str] = set()
        self._lock = threading.Lock()
        self.exchanges: list[Interaction] = []
        """Every interaction that answered a request in this run, in order."""
        self.misses: list[Miss] = []
        """Every request that found no answer, in order."""
        self.timeline: list[Interaction | Miss] = []
        """Every request in the order sent: the interaction that answered it, or its Miss."""
        self._keep_texts = keep_texts
        self.body_texts: dict[int, str] = {}
        """The recorded request body's sorted JSON of timeline entries whose matching took it
        (by position), so their records' digests need no second serialization."""

    @property
    def recorded(self) -> Sequence[Interaction]:
        """The interactions read from the cassette (none in `all` mode)."""
        return tuple(self._recorded)

    def lookup(self, request: ClientRequest) -> Lookup:
        """Decide how to answer one request (see the module doc)."""
        with self._lock:
            if self._live or self.mode == "new_episodes":
                # Only these modes can write the cassette that must not hold them.
                self._secrets.update(request.credentials())
            if self._live:
                return Live()
            if self._index is None:
                self._index = ExactIndex(self._recorded)
            method = request.method.upper()
            hit = self._index.sent(self._played, method, request.path, request.content)
            found = (
                Match(hit, None)
                if hit is not None
                else find(
                    self._recorded, self._played, method, request.path, request.body(), self._index
                )
            )
            if found is not None:
                self._played[found.index] = True
                interaction = self._recorded[found.index]
                self.exchanges.append(interaction)
                if self._keep_texts and found.body_text is not None:
                    self.body_texts[len(self.timeline)] = found.body_text
                self.timeline.append(interaction)
                return Replayed(interaction, found.index, found.body_text)
            if self.mode == "new_episodes":
                return Live()
            unanswered = miss(self._recorded, self._played, request.recorded())
            self.misses.append(unanswered)
            self.timeline.append(unanswered)
            return unanswered

    def keep(self, request: ClientRequest, response: WireResponse) -> Interaction:
        """Record a live round trip (credentials already out of `response`); return it."""
        interaction = Interaction(request.recorded(), response)
        with self._lock:
            self._secrets.update(request.credentials())
            self._new.append(interaction)
            self.exchanges.append(interaction)
            self.timeline.append(interaction)
        return interaction

    @property
    def changed(self) -> bool:
        """Whether saving would write the file (something was recorded)."""
        return bool(self._new) or (self.mode == "all" and self.existed)

    def save(self, secrets: Sequence[str] = ()) -> bool:
        """Write the cassette if anything was recorded; SecretLeakError writes nothing.

        `secrets` adds values that must not appear besides those the client sent.
        """
        with self._lock:
            if not self.changed:
                return False
            kept = [] if self.mode == "all" else self._recorded
            save_traffic(self.path, self.meta, [*kept, *self._new], {*self._secrets, *secrets})
            return True
