"""One cassette of free client exchanges: record modes, request matching and atomic saving.

Record modes, as vcrpy and pytest-recording name them:

- `none`: replay only; a request without a recorded match is a miss;
- `once`: replay when the cassette exists, otherwise record it (the default);
- `new_episodes`: replay what matches, record the rest and add it to the cassette;
- `all`: record everything again; the cassette is rewritten with this session's
  exchanges only.

A request matches a recorded one with the same method, the same path (the
recorded URL ends with it: a route may put a prefix before it), the same query
(credential keys left out) and the same body (canonical JSON: key order and
`1` vs `1.0` do not matter). Each recorded answer is played once, in file order,
so a test that asks the same thing twice gets both recorded answers in turn.

Every added exchange rewrites the file atomically (temp file + rename) before
the client gets the end of its answer, and a file that would hold a credential
is refused, not written.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from fcreplay.atomic import write_text_atomically
from fcreplay.canonical import same_value
from fcreplay.cassettes.redaction import SECRET_QUERY_KEYS, refuse_leaks
from fcreplay.cassettes.store import (
    CassetteMeta,
    Interaction,
    RecordedResponse,
    UnreadableInteraction,
    assemble_cassette,
    interaction_text,
    load_cassette,
)
from fcreplay.errors import InputError
from fcreplay.structdiff import Difference, differences

RecordMode = Literal["none", "once", "new_episodes", "all"]
RECORD_MODES: tuple[RecordMode, ...] = ("none", "once", "new_episodes", "all")
MAX_SHOWN = 5
"""Differing paths named in a miss message; the rest are counted."""


@dataclass(frozen=True)
class RequestKey:
    """What matching compares: method, path, query without credentials, decoded body."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    body: Any

    @classmethod
    def of(cls, method: str, target: str, body: Any) -> RequestKey:
        """The key of a request: `target` is its path and query."""
        parts = urlsplit(target)
        return cls(method.upper(), parts.path, _query(parts.query), body)

    def describe(self) -> str:
        """`POST /v1/chat/completions` (the query is left out: it may have held a key)."""
        return f"{self.method} {self.path}"


@dataclass(frozen=True)
class Miss:
    """No recorded answer for a request, with the nearest recorded request and how it differs."""

    message: str
    nearest: int | None
    """0-based index of the nearest recorded interaction; None when nothing is recorded."""
    changes: tuple[Difference, ...] = ()
    """Body differences from the nearest recorded request to this one."""


def _query(query: str) -> tuple[tuple[str, str], ...]:
    pairs = parse_qsl(query, keep_blank_values=True)
    return tuple(sorted((k, v) for k, v in pairs if k.lower() not in SECRET_QUERY_KEYS))


def _same_place(interaction: Interaction, key: RequestKey) -> bool:
    recorded = interaction.request
    parts = urlsplit(recorded.uri)
    return (
        recorded.method == key.method
        and parts.path.endswith(key.path)
        and _query(parts.query) == key.query
    )


class Tape:
    """A cassette file opened in one record mode; thread-safe (one lock per cassette)."""

    def __init__(self, path: Path, mode: RecordMode, meta: CassetteMeta) -> None:
        """Open `path`; raises InputError when an existing file is not a usable cassette."""
        self.path = path
        self.mode = mode
        self.meta = meta
        existed = path.is_file()
        self.replays = mode in ("none", "new_episodes") or (mode == "once" and existed)
        """Whether requests are answered from the recording."""
        self.records = mode in ("all", "new_episodes") or (mode == "once" and not existed)
        """Whether requests without a recorded answer go to the upstream and are added."""
        self._recorded: list[Interaction] = []
        self._texts: list[str] = []
        if existed and mode != "all":
            self._load()
        self._played: set[int] = set()
        self._lock = threading.Lock()

    def _load(self) -> None:
        cassette = load_cassette(self.path)
        unreadable = [i for i in cassette.interactions if isinstance(i, UnreadableInteraction)]
        if unreadable and self.mode == "new_episodes":
            first = unreadable[0]
            raise InputError.at(
                self.path,
                None,
                f"interaction {first.index + 1} is unreadable ({first.reason}); adding to the "
                "cassette would drop it: fix it, or record it again with --record-mode all",
            )
        self._recorded = [i for i in cassette.interactions if isinstance(i, Interaction)]
        if self.mode == "new_episodes":
            self._texts = [interaction_text(i) for i in self._recorded]

    @property
    def interactions(self) -> list[Interaction]:
        """The recorded interactions loaded from the file, in file order."""
        return list(self._recorded)

    def play(self, key: RequestKey) -> RecordedResponse | Miss:
        """The recorded answer to `key` (each played once), or the miss that says why not."""
        with self._lock:
            for index, interaction in enumerate(self._recorded):
                if index in self._played or not _same_place(interaction, key):
                    continue
                if same_value(interaction.request.body, key.body):
                    self._played.add(index)
                    return interaction.response
            return self._miss(key)

    def _miss(self, key: RequestKey) -> Miss:
        where = f"{self.path}"
        if not self._recorded:
            if not self.path.is_file():
                return Miss(
                    f"no cassette {where} to answer {key.describe()}; record it with "
                    "--record-mode once and an --upstream",
                    None,
                )
            return Miss(f"{where} has no recorded exchanges to answer {key.describe()}", None)
        best: tuple[int, int, list[Difference]] | None = None
        for index, interaction in enumerate(self._recorded):
            if not _same_place(interaction, key):
                continue
            found = differences(interaction.request.body, key.body)
            if not found and index in self._played:
                return Miss(
                    f"{where}: interaction {index + 1} matches {key.describe()} but was "
                    "already played (each recorded answer is played once); record the "
                    "repeated request with --record-mode new_episodes",
                    index,
                )
            if best is None or len(found) < best[1]:
                best = (index, len(found), found)
        if best is None:
            shown = ", ".join(sorted({_place(i) for i in self._recorded}))
            return Miss(
                f"{where} has no recorded request to {key.describe()} (recorded: {shown})",
                None,
            )
        index, count, found = best
        paths = ", ".join(change.path or "/" for change in found[:MAX_SHOWN])
        more = f" and {count - MAX_SHOWN} more" if count > MAX_SHOWN else ""
        return Miss(
            f"{where} has no recorded answer for this {key.describe()}: the nearest recorded "
            f"request, interaction {index + 1}, differs at {paths}{more}",
            index,
            tuple(found),
        )

    def add(self, interaction: Interaction, secrets: Iterable[str], adapter: str | None) -> None:
        """Append a finished exchange and rewrite the cassette atomically.

        `adapter` names the exchange's wire format; the cassette's fcreplay block
        takes the first one. Raises SecretLeakError (nothing written, the exchange
        dropped) when the cassette would hold one of `secrets` or a key-shaped string.
        """
        text = interaction_text(interaction)
        with self._lock:
            refuse_leaks(text, secrets, where=f"cassette {self.path}")
            if adapter and not self.meta.adapter:
                self.meta = replace(self.meta, adapter=adapter)
            self._texts.append(text)
            write_text_atomically(self.path, assemble_cassette(self.meta, self._texts))


def _place(interaction: Interaction) -> str:
    return f"{interaction.request.method} {urlsplit(interaction.request.uri).path}"
