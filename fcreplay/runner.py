"""Runs a suite: every unit's repetitions, live or from cassettes, logged as they finish."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .adapters import Adapter, get_adapter
from .attempt import run_attempt
from .cassette import CassetteMeta
from .config import Target
from .errors import InputError
from .plan import Unit, plan_units
from .playback import EpisodePlayer, LivePlayer, ReplayPlayer, Tape, Transport
from .progress import Progress
from .redaction import refuse_leaks
from .runlog import (
    AttemptKey,
    RunLogWriter,
    attempt_key,
    new_run_id,
    read_run_log,
    rewrite_sorted,
    run_log_path,
)
from .suite import Suite

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
    in flight; `resume` continues it.
    """
    units = plan_units(
        suite, targets=options.targets, variants=options.variants, case_ids=options.case_ids
    )
    repetitions = suite.config.repetitions
    order = [
        (u.target.name, u.variant, u.case.id, n) for u in units for n in range(1, repetitions + 1)
    ]
    runs = options.runs_dir or suite.config.runs
    cassettes = options.cassettes_dir or suite.config.cassettes
    run_id = options.resume or new_run_id(options.mode)
    log_path = run_log_path(runs, run_id)
    done: set[AttemptKey] = set()
    truncate_to = None
    notes: list[str] = []
    if options.resume:
        contents = read_run_log(log_path)
        done = {attempt_key(r) for r in contents.records}
        if contents.torn_line is not None:
            truncate_to = contents.complete_bytes
            notes.append(
                f"{log_path}:{contents.torn_line}: incomplete last record (the run was "
                "interrupted while writing it); ignored, that attempt runs again"
            )
    secrets = _secrets(suite, units) if options.mode == "record" else []
    adapters = {u.target.adapter: get_adapter(u.target.adapter) for u in units}
    transports: dict[str, Transport] = dict(options.transports or {})
    if options.mode == "record":
        for target in {u.target.name: u.target for u in units}.values():
            if target.name not in transports:
                transports[target.name] = _transport(suite, target, adapters[target.adapter])
    todo = sum(1 for key in order if key not in done)
    progress = progress or Progress(todo)
    progress.total = todo
    for note in notes:
        progress.note(note)
    lock = threading.Lock()
    records: list[dict[str, Any]] = []

    durable = options.mode == "record"
    with RunLogWriter(log_path, truncate_to=truncate_to, durable=durable) as writer:

        def run_unit(unit: Unit) -> None:
            adapter = adapters[unit.target.adapter]
            meta = CassetteMeta(unit.target.name, adapter.NAME, unit.variant, unit.case.id)
            path = unit.cassette_path(cassettes)
            tape = Tape.load(path, meta) if _reads_tape(options, path) else Tape(path, meta)
            finished = [
                n
                for n in range(1, repetitions + 1)
                if (unit.target.name, unit.variant, unit.case.id, n) in done
            ]
            live = options.mode == "record" and not (options.record_mode == "once" and tape.exists)
            if live and options.record_mode == "all":
                tape.keep_only(finished)
            hint = _record_hint(unit)
            for attempt in range(1, repetitions + 1):
                if attempt in finished:
                    continue
                if options.mode == "replay" and not tape.exists:
                    record = _missing_cassette(suite, unit, attempt, run_id, path, hint, adapter)
                else:
                    player: Any
                    if not live:
                        player = ReplayPlayer(tape.takes(attempt), cassette=path, record_hint=hint)
                    elif options.record_mode == "new_episodes":
                        player = EpisodePlayer(
                            ReplayPlayer(tape.takes(attempt), cassette=path, record_hint=hint),
                            LivePlayer(transports[unit.target.name], attempt),
                        )
                    else:
                        player = LivePlayer(transports[unit.target.name], attempt)
                    record = run_attempt(
                        suite,
                        unit,
                        attempt,
                        player,
                        adapter=adapter,
                        run_id=run_id,
                        max_retries=suite.config.max_retries,
                    )
                    if live:
                        tape.put(attempt, player.takes)
                        tape.save(secrets)
                with lock:
                    if secrets:
                        refuse_leaks(_json(record), secrets, where=f"run log {log_path}")
                    writer.append(record)
                    records.append(record)
                progress.advance(record)

        try:
            if options.concurrency <= 1:
                for unit in units:
                    run_unit(unit)
            else:
                with ThreadPoolExecutor(max_workers=options.concurrency) as pool:
                    futures = [pool.submit(run_unit, unit) for unit in units]
                    try:
                        wait(futures)
                    except BaseException:
                        for future in futures:
                            future.cancel()
                        raise
                    for future in futures:
                        future.result()  # re-raise the first worker error
        finally:
            progress.finish()
            for transport in transports.values():
                transport.close()
    rewrite_sorted(log_path, order)
    position = {key: index for index, key in enumerate(order)}
    records.sort(key=lambda r: position[attempt_key(r)])
    return RunResult(run_id, log_path, tuple(records), skipped=len(done), notes=tuple(notes))


def _reads_tape(options: RunOptions, path: Path) -> bool:
    """Whether the unit's cassette on disk matters for this run."""
    if options.mode == "replay":
        return True
    return options.record_mode != "all" or options.resume is not None


def _transport(suite: Suite, target: Target, adapter: Adapter) -> Transport:
    from .transport import HttpTransport  # httpx is needed only when recording

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
    adapter: Adapter,
) -> dict[str, Any]:
    from .attempt import AttemptAborted

    class _NoCassette:
        def exchange(self, request: Any, *, step: int) -> Any:
            raise AttemptAborted("missing_cassette", f"no cassette {path}; record it with `{hint}`")

        def pause(self, seconds: float) -> None:
            """Nothing to wait for."""

    return run_attempt(
        suite, unit, attempt, _NoCassette(), adapter=adapter, run_id=run_id, max_retries=0
    )


def _json(record: dict[str, Any]) -> str:
    import json

    return json.dumps(record, ensure_ascii=False)
