"""Where a run's answers come from, decided once per run: live providers or cassettes.

A source opens each unit's cassette and hands out one player per attempt; after
the attempt it keeps what must be kept (a recording source saves the cassette).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.cassettes.redaction import SecretGuard
from fcreplay.engine.plan import Unit
from fcreplay.engine.request_options import secret_headers
from fcreplay.errors import InputError
from fcreplay.inputs.config import Target
from fcreplay.inputs.suite import Suite

if TYPE_CHECKING:
    from fcreplay.cassettes.store import Cassette
    from fcreplay.cassettes.unit import UnitCassette
    from fcreplay.engine.players import (
        MissingCassettePlayer,
        Player,
        Recorder,
        ReplayPlayer,
        Transport,
    )


class CassetteObserver(Protocol):
    """Something that looks at each unit's cassette as a replay reads it."""

    def add(self, cassette: Cassette, unit: Unit) -> None: ...

    def note_missing(self, path: Path) -> None: ...

    def fresh(self) -> CassetteObserver: ...

    def merge(self, other: CassetteObserver) -> None: ...


class UnitPlayers(Protocol):
    """The players of one unit's attempts, and what is kept after each."""

    def player(self, attempt: int) -> Player: ...

    def keep(self, attempt: int) -> None:
        """Called when the attempt's record is ready, before it is logged."""

    def finish(self, complete: bool) -> str | None:
        """Called after the unit's last attempt; `complete` when every attempt got its
        answer. Returns a note for the user, if there is something to say."""


class Source(Protocol):
    """What differs between recording and replaying a suite."""

    label: Literal["record", "replay"]
    """Goes into the run id."""
    durable: bool
    """Whether each log record is synced to disk (recorded attempts cost money)."""
    guard: SecretGuard
    """What every written line is checked against (the credentials in use, key shapes)."""

    def reads_cassettes(self, *, resuming: bool) -> bool: ...

    def resume_hint(self, run_id: str, selection: str) -> str:
        """What to run to continue an interrupted run (`selection`: its options)."""
        ...

    def open(self, unit: Unit, cassette: UnitCassette, finished: Sequence[int]) -> UnitPlayers: ...

    def fresh_observer(self) -> CassetteObserver | None: ...

    def request_counts(self) -> dict[str, int]:
        """Requests sent `live` and answered from cassettes (`replayed`), when recording."""
        ...

    def merge_observer(self, observed: CassetteObserver | None) -> None: ...

    def close(self) -> None: ...


class ReplaySource:
    """Every answer from the unit's cassette; a unit without one is answered by nothing."""

    label: Literal["record", "replay"] = "replay"
    durable = False

    def __init__(self, observer: CassetteObserver | None, guard: SecretGuard) -> None:
        self._observer = observer
        self.guard = guard

    def reads_cassettes(self, *, resuming: bool) -> bool:
        return True

    def resume_hint(self, run_id: str, selection: str) -> str:
        return "a replay is cheap: run it again"

    def open(self, unit: Unit, cassette: UnitCassette, finished: Sequence[int]) -> UnitPlayers:
        if self._observer is not None:
            if cassette.cassette is not None:
                self._observer.add(cassette.cassette, unit)
            else:
                self._observer.note_missing(cassette.path)
        return _Replaying(cassette, record_hint(unit))

    def request_counts(self) -> dict[str, int]:
        return {}

    def fresh_observer(self) -> CassetteObserver | None:
        # In a forked worker: count only what this worker reads, for the parent to merge.
        if self._observer is not None:
            self._observer = self._observer.fresh()
        return self._observer

    def merge_observer(self, observed: CassetteObserver | None) -> None:
        if self._observer is not None and observed is not None:
            self._observer.merge(observed)

    def close(self) -> None:
        """Nothing was opened."""


class _Replaying:
    def __init__(self, cassette: UnitCassette, hint: str) -> None:
        self._cassette = cassette
        self._hint = hint

    def player(self, attempt: int) -> Player:
        # The players load with the first unit replayed (a check from its cache has none),
        # once: an import here would cost a look-up for every attempt.
        missing, replay = _replay_players()
        # A cassette read from disk was there; only one that was not is looked for again.
        if self._cassette.cassette is None and not self._cassette.exists:
            return missing(self._cassette.path, self._hint)
        placed = self._cassette.of_attempt(attempt)
        return replay(placed, cassette=self._cassette.path, record_hint=self._hint)

    def keep(self, attempt: int) -> None:
        """A replay keeps nothing but its log."""

    def finish(self, complete: bool) -> str | None:
        """Nothing was written."""
        return None


class RecordSource:
    """Answers from the providers, kept in each unit's cassette as its attempts end."""

    label: Literal["record", "replay"] = "record"
    durable = True

    def __init__(
        self,
        suite: Suite,
        units: Sequence[Unit],
        adapters: Mapping[str, ClientAdapter],
        record_mode: Literal["all", "once", "new_episodes"],
        transports: Mapping[str, Transport] | None,
    ) -> None:
        self._mode = record_mode
        self._repetitions = suite.config.repetitions
        self.guard = SecretGuard(suite.config.secret_values())
        self._secret_headers = suite.config.secret_headers
        self._counts: Counter[str] = Counter(live=0, replayed=0)
        self._count_lock = threading.Lock()
        self._transports: dict[str, Transport] = dict(transports or {})
        for target in {u.target.name: u.target for u in units}.values():
            if target.name not in self._transports:
                adapter = adapters[target.adapter]
                self._transports[target.name] = _http_transport(suite, target, adapter)

    def reads_cassettes(self, *, resuming: bool) -> bool:
        return self._mode != "all" or resuming

    def request_counts(self) -> dict[str, int]:
        with self._count_lock:
            return dict(self._counts)

    def _count(self, live: int, replayed: int) -> None:
        with self._count_lock:
            self._counts["live"] += live
            self._counts["replayed"] += replayed

    def resume_hint(self, run_id: str, selection: str) -> str:
        return f"continue with `fcreplay record --resume {run_id}{selection}`"

    def open(self, unit: Unit, cassette: UnitCassette, finished: Sequence[int]) -> UnitPlayers:
        # `once` records what the cassette lacks, attempt by attempt: a unit whose run
        # was killed halfway has a cassette, but not a complete one.
        repetitions = range(1, self._repetitions + 1)
        if self._mode == "once":
            live = frozenset(n for n in repetitions if not cassette.of_attempt(n))
        else:
            live = frozenset(repetitions)
        if live and self._mode == "all":
            cassette.keep_only(finished)
        transport = self._transports[unit.target.name]
        return _Recording(
            cassette,
            transport,
            self._mode,
            live,
            (self.guard, self._secret_headers),
            record_hint(unit),
            self._count,
        )

    def fresh_observer(self) -> CassetteObserver | None:
        return None

    def merge_observer(self, observed: CassetteObserver | None) -> None:
        """Recording has no observer."""

    def close(self) -> None:
        for transport in self._transports.values():
            transport.close()


class _Recording:
    def __init__(
        self,
        cassette: UnitCassette,
        transport: Transport,
        mode: str,
        live: frozenset[int],
        guarding: tuple[SecretGuard, tuple[str, ...]],
        hint: str,
        count: Callable[[int, int], None],
    ) -> None:
        self._cassette = cassette
        self._count = count
        self._replaying: ReplayPlayer | None = None
        self._transport = transport
        self._mode = mode
        self._live = live
        self._guard, self._secret_headers = guarding
        self._hint = hint
        self._recorder: Recorder | None = None
        self._saved = False

    def player(self, attempt: int) -> Player:
        from fcreplay.engine.players import LivePlayer, NewEpisodesPlayer, ReplayPlayer

        self._recorder = None
        if attempt not in self._live:
            placed = self._cassette.of_attempt(attempt)
            self._replaying = ReplayPlayer(
                placed, cassette=self._cassette.path, record_hint=self._hint
            )
            return self._replaying
        live = LivePlayer(self._transport, attempt, self._guard, self._secret_headers)
        if self._mode == "new_episodes":
            placed = self._cassette.of_attempt(attempt)
            replayed = ReplayPlayer(placed, cassette=self._cassette.path, record_hint=self._hint)
            self._recorder = NewEpisodesPlayer(replayed, live)
        else:
            self._recorder = live
        return self._recorder

    def keep(self, attempt: int) -> None:
        from fcreplay.engine.players import NewEpisodesPlayer

        if isinstance(self._recorder, NewEpisodesPlayer):
            self._count(*self._recorder.counts)
        elif self._recorder is not None:
            self._count(len(self._recorder.recorded), 0)
        elif self._replaying is not None:
            self._count(0, self._replaying.answered)
        # An attempt that reached no provider (connection refused) has nothing to keep.
        if self._recorder is not None and (self._recorder.recorded or self._saved):
            self._cassette.put(attempt, self._recorder.recorded)
            self._cassette.save(self._guard)
            self._saved = True

    def finish(self, complete: bool) -> str | None:
        if not self._saved:
            return None
        if complete:
            self._cassette.commit()
            return None
        kept = (
            f"kept {self._cassette.path} unchanged"
            if self._cassette.exists
            else f"wrote no {self._cassette.path}"
        )
        return (
            f"{kept}: not every attempt got an answer; the recording so far waits in "
            f"{self._cassette.staging} for `--resume`"
        )


@cache
def _replay_players() -> tuple[type[MissingCassettePlayer], type[ReplayPlayer]]:
    from fcreplay.engine.players import MissingCassettePlayer, ReplayPlayer

    return MissingCassettePlayer, ReplayPlayer


def record_hint(unit: Unit) -> str:
    """The command that records just this unit."""
    return (
        f"fcreplay record --target {unit.target.name} --variant {unit.variant} "
        f"--case {unit.case.id}"
    )


def _http_transport(suite: Suite, target: Target, adapter: ClientAdapter) -> Transport:
    from fcreplay.engine.transport import HttpTransport  # httpx only when recording

    secrets = secret_headers(target, suite.config.source)
    if target.api_key_env:
        key = os.environ.get(target.api_key_env)
        if not key:
            raise InputError.at(
                suite.config.source,
                None,
                f"target {target.name!r}: the environment variable {target.api_key_env} "
                "is not set; export it with the provider key before recording",
            )
        header = target.api_key_header or adapter.API_KEY_HEADER
        prefix = adapter.API_KEY_PREFIX if target.api_key_prefix is None else target.api_key_prefix
        secrets[header] = prefix + key
    return HttpTransport(
        target.base_url or adapter.DEFAULT_BASE_URL,
        secret_headers=secrets,
        timeout=suite.config.request_timeout,
        deadline=suite.config.limits.request_deadline,
        max_bytes=suite.config.limits.max_response_bytes,
    )
