"""Running a run's units at once: threads when recording, forked processes for a large replay.

Recording waits for the network, which threads overlap; a replay parses and
validates, which threads would serialize.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed, wait

from fcreplay.engine.sources import CassetteObserver
from fcreplay.engine.unitrun import Emit, UnitRun
from fcreplay.record import AttemptRecord

_FORKED: UnitRun | None = None
"""The run a forked replay worker works on (inherited, so nothing is pickled in)."""


def _replay_chunk(indexes: list[int]) -> tuple[list[AttemptRecord], CassetteObserver | None]:
    assert _FORKED is not None
    run = _FORKED
    observer = run.source.fresh_observer()
    records: list[AttemptRecord] = []
    for index in indexes:
        run.run_unit(run.units[index], records.append)
    return records, observer


def run_in_processes(run: UnitRun, processes: int, emit: Emit) -> None:
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
                    run.source.merge_observer(observed)
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
