"""Runs a suite: every unit's repetitions, live or from cassettes, logged as they finish."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.adapters.registry import get_adapter
from fcreplay.cassettes.redaction import refuse_leaks
from fcreplay.cassettes.store import Cassette, CassetteMeta
from fcreplay.engine.attempt import AttemptAborted, run_attempt
from fcreplay.engine.plan import Unit, plan_units
from fcreplay.engine.players import EpisodePlayer, LivePlayer, ReplayPlayer, Tape, Transport
from fcreplay.engine.progress import Progress
from fcreplay.errors import InputError
from fcreplay.inputs.config import Target
from fcreplay.inputs.suite import Suite
from fcreplay.runlog import (
    AttemptKey,
    RunLogWriter,
    attempt_key,
    new_run_id,
    read_run_log,
    rewrite_in_order,
    run_log_path,
)

Mode = Literal["record", "replay"]
RecordMode = Literal["all", "once", "new_episodes"]


@dataclass(frozen=True)
class RunOptions:
    """What to run and how."""

    mode: Mode
    targets: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    record_mode: RecordMode = "all"
    """all: record every attempt afresh; once: record only units without a cassette;
    new_episodes: replay what still matches and record the rest."""
    concurrency: int = 1
    resume: str | None = None
    """Run id whose log is continued: attempts already logged are skipped."""
    runs_dir: Path | None = None
    """Where run logs go (default: the suite's `runs`)."""
    cassettes_dir: Path | None = None
    """Where cassettes are (default: the suite's `cassettes`)."""
    processes: int | None = None
    """Worker processes for a replay; None: one per usable CPU once the replay is large
    enough to repay starting them (see `_processes`)."""
    observer: CassetteObserver | None = None
    """Also shown every cassette the run reads (check feeds schema diff this way, so
    cassettes are read once); in worker processes each chunk gets a fresh one that
    is merged back."""
    transports: Mapping[str, Transport] | None = None
    """Per target name, what sends its requests when recording (default: HTTP to the
    target's base URL); lets benchmarks record from an in-process simulator."""


@dataclass(frozen=True)
class RunResult:
    """A finished (or resumed-and-finished) run."""

    run_id: str
    log_path: Path
    records: tuple[dict[str, Any], ...]
    skipped: int = 0
    """Attempts already in the log when resuming."""
    notes: tuple[str, ...] = field(default=())

    @property
    def problems(self) -> list[dict[str, Any]]:
        """Attempts that could not be replayed faithfully: drift or a missing recording."""
        return [
            r
            for r in self.records
            if any(f["code"] == "request_drift" for f in r["findings"])
            or (r["transport_error"] or {}).get("type")
            in ("missing_cassette", "missing_interaction")
        ]


def run_suite(suite: Suite, options: RunOptions, *, progress: Progress | None = None) -> RunResult:
    """Run every planned attempt and return the records of this run.

    Each attempt is written to the run log (and, when recording, its cassette
    saved) as soon as it ends, so an interrupted run loses at most the attempts
    in flight; `resume` continues it. Recording runs units on threads (the work
    is waiting for the network); a large replay runs them in worker processes
    (the work is parsing and validating, which threads would serialize).
    """
    units = plan_units(
        suite, targets=options.targets, variants=options.variants, case_ids=options.case_ids
    )
    repetitions = suite.config.repetitions
    order = [
        (u.target.name, u.variant, u.case.id, n) for u in units for n in range(1, repetitions + 1)
    ]
    runs = options.runs_dir or suite.config.runs
    run_id = options.resume or new_run_id(options.mode)
    log_path = run_log_path(runs, run_id)
    done: set[AttemptKey] = set()
    spans: dict[AttemptKey, tuple[int, int]] = {}
    truncate_to = None
    notes: list[str] = []
    if options.resume:
        contents = read_run_log(log_path)
        done = {attempt_key(r) for r in contents.records}
        spans = {
            attempt_key(r): span for r, span in zip(contents.records, contents.spans, strict=True)
        }
        if contents.torn_line is not None:
            truncate_to = contents.complete_bytes
            notes.append(
                f"{log_path}:{contents.torn_line}: incomplete last record (the run was "
                "interrupted while writing it); ignored, that attempt runs again"
            )
    run = _Run(
        suite=suite,
        options=options,
        units=units,
        run_id=run_id,
        done=done,
        cassettes=options.cassettes_dir or suite.config.cassettes,
        adapters={u.target.adapter: get_adapter(u.target.adapter) for u in units},
        secrets=_secrets(suite, units) if options.mode == "record" else [],
        observer=options.observer,
    )
    if options.mode == "record":
        run.transports.update(options.transports or {})
        for target in {u.target.name: u.target for u in units}.values():
            if target.name not in run.transports:
                adapter = run.adapters[target.adapter]
                run.transports[target.name] = _transport(suite, target, adapter)
    todo = sum(1 for key in order if key not in done)
    progress = progress or Progress(todo)
    progress.total = todo
    for note in notes:
        progress.note(note)
    lock = threading.Lock()
    records: list[dict[str, Any]] = []
    durable = options.mode == "record"
    writer = RunLogWriter(log_path, truncate_to=truncate_to, durable=durable, spans=spans)
    with writer:

        def emit(record: dict[str, Any]) -> None:
            with lock:
                if run.secrets:
                    refuse_leaks(_json(record), run.secrets, where=f"run log {log_path}")
                writer.append(record)
                records.append(record)
            progress.advance(record)

        try:
            processes = _processes(options, len(units))
            if processes > 1:
                _run_in_processes(run, processes, emit)
            elif options.concurrency > 1:
                _run_in_threads(run, options.concurrency, emit)
            else:
                for unit in units:
                    run.run_unit(unit, emit)
        finally:
            progress.finish()
            for transport in run.transports.values():
                transport.close()
    rewrite_in_order(log_path, writer.spans, order)
    position = {key: index for index, key in enumerate(order)}
    records.sort(key=lambda r: position[attempt_key(r)])
    return RunResult(run_id, log_path, tuple(records), skipped=len(done), notes=tuple(notes))


Emit = Callable[[dict[str, Any]], None]


class CassetteObserver(Protocol):
    """Something that looks at each unit's cassette as a run reads it."""

    def add(self, cassette: Cassette, unit: Unit) -> None: ...

    def note_missing(self, path: Path) -> None: ...

    def fresh(self) -> CassetteObserver: ...

    def merge(self, other: CassetteObserver) -> None: ...


@dataclass
class _Run:
    """What every unit of one run shares."""

    suite: Suite
    options: RunOptions
    units: list[Unit]
    run_id: str
    done: set[AttemptKey]
    cassettes: Path
    adapters: dict[str, ClientAdapter]
    secrets: list[str]
    transports: dict[str, Transport] = field(default_factory=dict)
    observer: CassetteObserver | None = None

    def run_unit(self, unit: Unit, emit: Emit) -> None:
        """Run the attempts of one unit not already done, emitting each record."""
        options, suite = self.options, self.suite
        repetitions = suite.config.repetitions
        adapter = self.adapters[unit.target.adapter]
        meta = CassetteMeta(unit.target.name, adapter.NAME, unit.variant, unit.case.id)
        path = unit.cassette_path(self.cassettes)
        tape = Tape.load(path, meta) if _reads_tape(options) else Tape(path, meta)
        if self.observer is not None:
            if tape.cassette is not None:
                self.observer.add(tape.cassette, unit)
            elif options.mode == "replay":
                self.observer.note_missing(path)
        finished = [
            n
            for n in range(1, repetitions + 1)
            if (unit.target.name, unit.variant, unit.case.id, n) in self.done
        ]
        live = options.mode == "record" and not (options.record_mode == "once" and tape.exists)
        if live and options.record_mode == "all":
            tape.keep_only(finished)
        hint = _record_hint(unit)
        for attempt in range(1, repetitions + 1):
            if attempt in finished:
                continue
            if options.mode == "replay" and not tape.exists:
                emit(_missing_cassette(suite, unit, attempt, self.run_id, path, hint, adapter))
                continue
            player: Any
            if not live:
                player = ReplayPlayer(tape.takes(attempt), cassette=path, record_hint=hint)
            elif options.record_mode == "new_episodes":
                player = EpisodePlayer(
                    ReplayPlayer(tape.takes(attempt), cassette=path, record_hint=hint),
                    LivePlayer(self.transports[unit.target.name], attempt),
                )
            else:
                player = LivePlayer(self.transports[unit.target.name], attempt)
            record = run_attempt(
                suite,
                unit,
                attempt,
                player,
                adapter=adapter,
                run_id=self.run_id,
                max_retries=suite.config.max_retries,
            )
            if live:
                tape.put(attempt, player.takes)
                tape.save(self.secrets)
            emit(record)


def _processes(options: RunOptions, units: int) -> int:
    """Worker processes for this run: by default only for replays big enough to repay
    the start-up; fork is required (the workers inherit the loaded suite)."""
    if options.mode != "replay" or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if options.processes is not None:
        return max(1, min(options.processes, units))
    return max(1, min(len(os.sched_getaffinity(0)), units // _UNITS_PER_PROCESS))


_UNITS_PER_PROCESS = 100
"""Below this many units per worker, starting processes costs more than it saves."""
_FORKED: _Run | None = None
"""The run a forked replay worker works on (inherited, so nothing is pickled in)."""


def _replay_chunk(indexes: list[int]) -> tuple[list[dict[str, Any]], Any]:
    assert _FORKED is not None
    run = _FORKED
    if run.options.observer is not None:
        run.observer = run.options.observer.fresh()
    records: list[dict[str, Any]] = []
    for index in indexes:
        run.run_unit(run.units[index], records.append)
    return records, run.observer


def _run_in_processes(run: _Run, processes: int, emit: Emit) -> None:
    global _FORKED
    _FORKED = run
    # Several chunks per worker keep the workers busy to the end and the log growing.
    size = max(1, len(run.units) // (processes * 8))
    chunks = [list(range(i, min(i + size, len(run.units)))) for i in range(0, len(run.units), size)]
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
            futures = [pool.submit(_replay_chunk, chunk) for chunk in chunks]
            try:
                for future in as_completed(futures):
                    records, observed = future.result()
                    for record in records:
                        emit(record)
                    if run.observer is not None and observed is not None:
                        run.observer.merge(observed)
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    finally:
        _FORKED = None


def _run_in_threads(run: _Run, concurrency: int, emit: Emit) -> None:
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures = [pool.submit(run.run_unit, unit, emit) for unit in run.units]
        try:
            wait(futures)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        for future in futures:
            future.result()  # re-raise the first worker error


def _reads_tape(options: RunOptions) -> bool:
    """Whether the unit's cassette on disk matters for this run."""
    if options.mode == "replay":
        return True
    return options.record_mode != "all" or options.resume is not None


def _transport(suite: Suite, target: Target, adapter: ClientAdapter) -> Transport:
    from fcreplay.engine.transport import HttpTransport  # httpx is needed only when recording

    auth = None
    if target.api_key_env:
        key = os.environ.get(target.api_key_env)
        if not key:
            raise InputError.at(
                suite.config.source,
                None,
                f"target {target.name!r}: the environment variable {target.api_key_env} "
                "is not set; export it with the provider key before recording",
            )
        auth = (adapter.API_KEY_HEADER, adapter.API_KEY_PREFIX + key)
    return HttpTransport(
        target.base_url or adapter.DEFAULT_BASE_URL,
        auth_header=auth,
        timeout=suite.config.request_timeout,
    )


def _secrets(suite: Suite, units: Sequence[Unit]) -> list[str]:
    names = {u.target.api_key_env for u in units if u.target.api_key_env}
    return [os.environ[name] for name in sorted(names) if os.environ.get(name)]


def _record_hint(unit: Unit) -> str:
    return (
        f"fcreplay record --target {unit.target.name} --variant {unit.variant} "
        f"--case {unit.case.id}"
    )


def _missing_cassette(
    suite: Suite,
    unit: Unit,
    attempt: int,
    run_id: str,
    path: Path,
    hint: str,
    adapter: ClientAdapter,
) -> dict[str, Any]:
    class _NoCassette:
        def exchange(self, request: Any, *, step: int) -> Any:
            raise AttemptAborted("missing_cassette", f"no cassette {path}; record it with `{hint}`")

        def pause(self, seconds: float) -> None:
            """Nothing to wait for."""

    return run_attempt(
        suite, unit, attempt, _NoCassette(), adapter=adapter, run_id=run_id, max_retries=0
    )


def _json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)
