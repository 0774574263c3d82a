"""Runs a suite: every unit's repetitions, live (`record`) or from cassettes (`replay`).

Both entry points share one loop; what differs between them (where answers come
from, what is kept, how durable the log is) is decided once, by the run's source.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import fcreplay.collector as collector
from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.adapters.registry import get_adapter
from fcreplay.atomic import sweep
from fcreplay.cassettes.redaction import SecretGuard
from fcreplay.engine.fingerprint import check_resumable, run_fingerprint
from fcreplay.engine.plan import Unit, plan_units
from fcreplay.engine.progress import Progress
from fcreplay.engine.sources import CassetteObserver, RecordSource, ReplaySource, Source
from fcreplay.engine.unitrun import UnitRun
from fcreplay.inputs.suite import Suite
from fcreplay.record import AttemptKey, AttemptRecord
from fcreplay.runlog import (
    RunLogWriter,
    finish_in_order,
    new_run_id,
    read_run_log,
    run_log_path,
)
from fcreplay.runmarks import RunEnd, RunHeader, RunScope
from fcreplay.runorder import OrderedBlocks
from fcreplay.shards import Shard

if TYPE_CHECKING:  # the pools (multiprocessing, concurrent.futures) load only when used
    from fcreplay.engine.players import Transport
    from fcreplay.engine.pools import Chunk, Condense

RecordMode = Literal["all", "once", "new_episodes"]
Logged = Callable[[str, Sequence[AttemptKey], Sequence[int], bytes], None]
"""Takes the run id, and lines of the log: each one's attempt and length, their bytes."""


@dataclass(frozen=True)
class RunOptions:
    """What to run and where; shared by recording and replay."""

    targets: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    concurrency: int = 1
    resume: str | None = None
    """Run id whose log is continued: attempts already logged are skipped."""
    runs_dir: Path | None = None
    """Where run logs go (default: the suite's `runs`)."""
    cassettes_dir: Path | None = None
    """Where cassettes are (default: the suite's `cassettes`)."""
    shard: Shard | None = None
    """Only the units of this shard (`check --shard K/N`); the others are left to other jobs."""


class Reuse(Protocol):
    """Units a replay need not run: every attempt's log line is known already (check's
    cache holds them from an earlier run of the same inputs)."""

    def covers(self, unit: Unit) -> bool:
        """Whether `unit`'s lines are known (it is then not replayed)."""
        ...

    def lines(self, run_id: str) -> Iterable[tuple[Sequence[tuple[AttemptKey, int]], bytes]]:
        """The known lines of every covered unit in plan order, stamped with `run_id`, in
        blocks: each line's attempt and length, and their bytes back to back."""
        ...


@dataclass(frozen=True)
class RecordOptions(RunOptions):
    """A live run."""

    record_mode: RecordMode = "all"
    """all: record every attempt afresh; once: record only units without a cassette;
    new_episodes: replay what still matches and record the rest."""
    transports: Mapping[str, Transport] | None = None
    """Per target name, what sends its requests (default: HTTP to the target's base
    URL); lets benchmarks record from an in-process simulator."""


@dataclass(frozen=True)
class ReplayOptions(RunOptions):
    """An offline run from cassettes."""

    processes: int | None = None
    """Worker processes; None: one per usable CPU once the replay is large enough to
    repay starting them (see `_processes`)."""
    observer: CassetteObserver | None = None
    """Also shown every cassette the replay reads (check feeds schema diff this way, so
    cassettes are read once); in worker processes each chunk gets a fresh one that
    is merged back."""
    reuse: Reuse | None = None
    """Units whose log lines are known: written to the log as they are, not replayed, not
    shown to `observer`."""
    condense: Condense | None = None
    """What is kept of each unit's records, made where it ran; the run's `records` are
    then only those it `keeps`."""
    logged: Logged | None = None
    """Also given each block of log lines that worker processes made, as they come back."""


@dataclass(frozen=True)
class RunResult:
    """A finished (or resumed-and-finished) run."""

    run_id: str
    log_path: Path
    records: tuple[AttemptRecord, ...]
    skipped: int = 0
    """Attempts already in the log when resuming."""
    notes: tuple[str, ...] = field(default=())
    """What the user was told along the way (a torn log line, a cassette kept)."""
    scope: RunScope = field(default_factory=RunScope)
    requests: Mapping[str, int] = field(default_factory=dict)
    """When recording: requests sent `live` and answered from cassettes (`replayed`)."""
    reused: int = 0
    """Attempts whose log lines came from `ReplayOptions.reuse`: they are in the log, not
    in `records`."""

    @property
    def problems(self) -> list[AttemptRecord]:
        """Attempts that could not be replayed faithfully: drift or a missing recording."""
        return [r for r in self.records if r.drift is not None or r.replay_miss]

    @property
    def errors(self) -> list[AttemptRecord]:
        """Attempts that got no decision to judge (transport or provider errors)."""
        return [r for r in self.records if r.transport_error is not None]


def record(suite: Suite, options: RecordOptions, *, progress: Progress | None = None) -> RunResult:
    """Run the suite live, writing cassettes and a durable run log as attempts finish."""
    units = planned_units(suite, options)
    adapters = _adapters(units)
    source = RecordSource(suite, units, adapters, options.record_mode, options.transports)
    mode = f"record:{options.record_mode}"
    return _run(suite, options, units, adapters, source, progress, processes=1, mode=mode)


def replay(suite: Suite, options: ReplayOptions, *, progress: Progress | None = None) -> RunResult:
    """Run the suite from its cassettes, offline: drift and missing recordings are findings."""
    units = planned_units(suite, options)
    source = ReplaySource(options.observer, SecretGuard(suite.config.secret_values()))
    if options.reuse is not None and options.resume is not None:
        raise ValueError("a resumed replay reuses its own log; it takes no other lines")
    reuse = options.reuse
    running = len(units) if reuse is None else sum(not reuse.covers(u) for u in units)
    processes = _processes(options.processes, running)
    with collector.paused():
        return _run(
            suite,
            options,
            units,
            _adapters(units),
            source,
            progress,
            processes=processes,
            mode="replay",
            reuse=reuse,
            condense=options.condense,
            logged=options.logged,
        )


def planned_units(suite: Suite, options: RunOptions) -> list[Unit]:
    """The units a run of `options` runs, in plan order (its shard's only, when sharded)."""
    units = plan_units(
        suite, targets=options.targets, variants=options.variants, case_ids=options.case_ids
    )
    shard = options.shard
    if shard is None:
        return units
    return [u for u in units if shard.owns(u.target.name, u.variant, u.case.id)]


def _adapters(units: list[Unit]) -> dict[str, ClientAdapter]:
    return {name: get_adapter(name) for name in dict.fromkeys(u.target.adapter for u in units)}


def _run(
    suite: Suite,
    options: RunOptions,
    units: list[Unit],
    adapters: dict[str, ClientAdapter],
    source: Source,
    progress: Progress | None,
    *,
    processes: int,
    mode: str,
    reuse: Reuse | None = None,
    condense: Condense | None = None,
    logged: Logged | None = None,
) -> RunResult:
    """Run every planned attempt and return the records of this run.

    Each attempt is written to the run log (and, when recording, its cassette
    saved) as soon as it ends, so an interrupted run loses at most the attempts
    in flight; `resume` continues it. Recording runs units on threads (the work
    is waiting for the network); a large replay runs them in worker processes
    (the work is parsing and validating, which threads would serialize).
    """
    repetitions = suite.config.repetitions
    order = [
        (u.target.name, u.variant, u.case.id, n) for u in units for n in range(1, repetitions + 1)
    ]
    run_id = options.resume or new_run_id(source.label)
    runs = options.runs_dir or suite.config.runs
    log_path = run_log_path(runs, run_id)
    cassettes = options.cassettes_dir or suite.config.cassettes
    notes: list[str] = [
        f"{path}: removed, left by an interrupted write"
        for folder in (cassettes, runs)
        for path in sweep(folder)
    ]
    fingerprint = run_fingerprint(suite, units, adapters)
    done: set[AttemptKey] = set()
    spans: dict[AttemptKey, tuple[int, int]] = {}
    truncate_to = None
    if options.resume:
        contents = read_run_log(log_path)
        check_resumable(log_path, contents.header, mode, fingerprint)
        # An attempt that got no answer is not done: resuming sends it again.
        kept = [
            (r, span)
            for r, span in zip(contents.records, contents.spans, strict=True)
            if r.verdict != "error"
        ]
        done = {r.key for r, _ in kept}
        spans = {r.key: span for r, span in kept}
        if contents.torn_line is not None or contents.end is not None:
            truncate_to = contents.complete_bytes  # the torn line and the run-end go
        if contents.torn_line is not None:
            notes.append(
                f"{log_path}:{contents.torn_line}: incomplete last record (the run was "
                "interrupted while writing it); ignored, that attempt runs again"
            )
    covered = [u for u in units if reuse.covers(u)] if reuse is not None else []
    reused = {
        (u.target.name, u.variant, u.case.id, n) for u in covered for n in range(1, repetitions + 1)
    }
    run = UnitRun(
        suite,
        [u for u in units if not reuse.covers(u)] if reuse is not None else units,
        run_id,
        done,
        cassettes,
        adapters,
        source,
        reads_disk=source.reads_cassettes(resuming=options.resume is not None),
        resuming=options.resume is not None,
    )
    todo = sum(1 for key in order if key not in done and key not in reused)
    progress = progress or Progress(todo)
    progress.total = todo
    again = f"resuming run {run_id}" if options.resume else f"{source.label} run {run_id}"
    known = f" ({len(reused)} more known from the cache)" if reused else ""
    progress.note(f"{again}: {todo} attempts{known}, log {log_path}")
    for note in notes:
        progress.note(note)

    def remark(text: str) -> None:
        notes.append(text)
        progress.note(text)

    run.note = remark
    if source.label == "record":
        run.on_retry = progress.note
    lock = threading.Lock()
    records: list[AttemptRecord] = []
    scope = RunScope(options.targets, options.variants, options.case_ids, options.shard)
    writer = RunLogWriter(
        log_path,
        truncate_to=truncate_to,
        durable=source.durable,
        spans=spans,
        guard=source.guard,
    )
    with writer:
        if not options.resume:
            writer.start(RunHeader(run_id, mode, fingerprint))
        blocks = OrderedBlocks(writer, (k for k in order if k not in done and k not in reused))

        def emit(record: AttemptRecord) -> None:
            line = writer.checked_line(record)
            with lock:
                writer.append_line(record.key, line, checked=True)
                if condense is None or condense.keeps(record):
                    records.append(record)
            progress.advance(record)

        def emit_block(chunk: Chunk) -> None:
            blocks.add(chunk.keys, chunk.sizes, chunk.block)
            if logged is not None:
                logged(run_id, chunk.keys, chunk.sizes, chunk.block)
            records.extend(chunk.records)
            progress.advance_many(chunk.seen)

        def run_unit(unit: Unit) -> None:
            if condense is None:
                run.run_unit(unit, emit)
                return
            mine: list[AttemptRecord] = []

            def keep(record: AttemptRecord) -> None:
                mine.append(record)
                emit(record)

            run.run_unit(unit, keep)
            condense.take(unit, condense.of(unit, mine))

        try:
            if reuse is not None and covered:
                for block in reuse.lines(run_id):
                    writer.append_known(*block)
            # The pools (multiprocessing, concurrent.futures) load only when used.
            if processes > 1:
                from fcreplay.engine.pools import run_in_processes

                run_in_processes(run, processes, emit_block, writer.checked_line, condense)
            elif options.concurrency > 1:
                from fcreplay.engine.pools import run_in_threads

                run_in_threads(run, options.concurrency, emit)
            else:
                for unit in run.units:
                    run_unit(unit)
            blocks.flush()
        except BaseException as exc:
            blocks.flush()  # what came back is logged
            # The log says it is unfinished, so nobody takes it for a whole run.
            reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else _first_line(exc)
            writer.end(RunEnd(run_id, source.label, False, len(writer.spans), reason, scope))
            if isinstance(exc, KeyboardInterrupt):
                selection = "".join(
                    f" --{option} {value}"
                    for option, values in (
                        ("target", scope.targets),
                        ("variant", scope.variants),
                        ("case", scope.case_ids),
                    )
                    for value in values
                )
                progress.note(
                    f"interrupted: {len(writer.spans)} attempts are in {log_path}; "
                    + source.resume_hint(run_id, selection)
                )
            raise
        finally:
            progress.finish()
            source.close()
    end = RunEnd(run_id, source.label, True, len(writer.spans), None, scope)
    finish_in_order(log_path, writer.spans, order, end, durable=source.durable)
    position = {key: index for index, key in enumerate(order)}
    records.sort(key=lambda r: position[r.key])
    return RunResult(
        run_id,
        log_path,
        tuple(records),
        skipped=len(done),
        notes=tuple(notes),
        scope=scope,
        requests=source.request_counts(),
        reused=len(reused),
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _processes(requested: int | None, units: int) -> int:
    """Worker processes for a replay: by default only when big enough to repay the
    start-up; fork is required (the workers inherit the loaded suite)."""
    if requested is not None:
        wanted = max(1, min(requested, units))
    else:
        wanted = max(1, min(len(os.sched_getaffinity(0)), units // _UNITS_PER_PROCESS))
    if wanted == 1:
        return 1  # a small suite never loads multiprocessing at all
    import multiprocessing

    return wanted if "fork" in multiprocessing.get_all_start_methods() else 1


_UNITS_PER_PROCESS = 100
"""Below this many units per worker, starting processes costs more than it saves."""
