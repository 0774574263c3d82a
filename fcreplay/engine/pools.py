"""Running a run's units at once: threads when recording, forked processes for a large replay.

Recording waits for the network, which threads overlap; a replay parses and
validates, which threads would serialize.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass
from typing import Any, Protocol

from fcreplay.engine.plan import Unit
from fcreplay.engine.sources import CassetteObserver
from fcreplay.engine.unitrun import Emit, UnitRun
from fcreplay.errors import SecretLeakError
from fcreplay.record import AttemptKey, AttemptRecord


class Condense(Protocol):
    """What a replay keeps of each unit's records, made where the unit ran (in a worker
    process when there are several), so that the records themselves can go."""

    def of(self, unit: Unit, records: list[AttemptRecord]) -> Any:
        """What the unit's records (every attempt, in order) give; picklable."""
        ...

    def keeps(self, record: AttemptRecord) -> bool:
        """Whether the run's result keeps `record` as well."""
        ...

    def take(self, unit: Unit, made: Any) -> None:
        """Receive what `of` made of `unit` (in the same process, as units finish)."""
        ...

    def joined(self, made: list[tuple[Unit, Any]]) -> Any:
        """What a worker sends back of a chunk's units, from what `of` made of each (in
        plan order); picklable."""
        ...

    def take_joined(self, units: list[Unit], joined: Any) -> None:
        """Receive what `joined` made of a chunk's `units` (in the parent)."""
        ...


EmitBlock = Callable[["Chunk"], None]
"""Takes a chunk's records, their run-log lines, already made (and passed by the secret
guard) and joined into one block, each line's attempt and length in bytes."""

_FORKED: tuple[UnitRun, Callable[[AttemptRecord], str], Condense | None] | None = None
"""The run a forked replay worker works on, how it makes log lines and what it keeps of
each unit (inherited, so nothing is pickled in)."""

_CHUNK_UNITS = 200
"""The most units in one chunk of work (a chunk's records wait in its worker)."""


@dataclass(frozen=True)
class Chunk:
    """What a worker sends back: records, their lines in one block, what it observed."""

    records: list[AttemptRecord]
    """All of them, or with `Condense` only those it keeps."""
    keys: list[AttemptKey]
    """The attempt of each line."""
    seen: list[tuple[str, str, int]]
    """Each line's verdict, unit label and attempt number (for the progress line)."""
    block: bytes
    sizes: list[int]
    made: tuple[list[int], Any]
    """The indexes of the units run (in the run's units), and what `Condense.joined`
    made of them."""
    observed: CassetteObserver | None
    leak: SecretLeakError | None
    """The guard's refusal of the line after the last one sent, if it refused one."""


def _replay_chunk(indexes: list[int]) -> Chunk:
    assert _FORKED is not None
    run, line_of, condense = _FORKED
    observer = run.source.fresh_observer()
    records: list[AttemptRecord] = []
    lines: list[bytes] = []
    made: list[tuple[Unit, Any]] = []
    done: list[int] = []
    seen: list[tuple[str, str, int]] = []
    keys: list[AttemptKey] = []

    def keep(record: AttemptRecord) -> None:
        line = line_of(record).encode()
        records.append(record)
        lines.append(line)
        keys.append(record.key)
        seen.append((record.verdict, record.unit, record.attempt))

    leak = None
    try:
        for index in indexes:
            start = len(records)
            run.run_unit(run.units[index], keep)
            if condense is not None:
                mine = records[start:]
                made.append((run.units[index], condense.of(run.units[index], mine)))
                done.append(index)
                records[start:] = [r for r in mine if condense.keeps(r)]
    except SecretLeakError as exc:
        leak = exc  # what came before the leak is logged, as if the parent made the lines
    # One block, not a string per line: the parent writes it at once, and its heap is
    # not left riddled with the holes of thousands of freed lines.
    block, sizes = b"".join(lines), [len(line) for line in lines]
    joined = condense.joined(made) if condense is not None else None
    return Chunk(records, keys, seen, block, sizes, (done, joined), observer, leak)


def run_in_processes(
    run: UnitRun,
    processes: int,
    emit: EmitBlock,
    line_of: Callable[[AttemptRecord], str],
    condense: Condense | None = None,
) -> None:
    """Run the units in forked workers, which also make each record's log line (the
    parent only writes them) and, with `condense`, what is kept of each unit: `emit`
    is called in the parent as chunks come back."""
    global _FORKED
    _FORKED = (run, line_of, condense)
    # Several chunks per worker keep the workers busy to the end and the log growing;
    # small ones bound what a worker holds before sending it.
    size = max(1, min(_CHUNK_UNITS, len(run.units) // (processes * 8)))
    chunks = [list(range(i, min(i + size, len(run.units)))) for i in range(0, len(run.units), size)]
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
            futures = {pool.submit(_replay_chunk, chunk) for chunk in chunks}
            try:
                for future in as_completed(futures):
                    # A future holds its result: one kept until the end would keep
                    # every chunk's records and lines alive in the parent.
                    futures.discard(future)
                    chunk = future.result()
                    del future
                    emit(chunk)
                    if condense is not None:
                        indexes, joined = chunk.made
                        condense.take_joined([run.units[i] for i in indexes], joined)
                    if chunk.leak is not None:
                        raise chunk.leak
                    run.source.merge_observer(chunk.observed)
                    del chunk
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    finally:
        _FORKED = None


def run_in_threads(run: UnitRun, concurrency: int, emit: Emit) -> None:
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
