"""Finding the run log a command reads: a path, a run id, or the newest finished run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fcreplay.errors import InputError

if TYPE_CHECKING:
    from fcreplay.record import AttemptRecord
    from fcreplay.runmarks import RunEnd


@dataclass(frozen=True)
class ChosenLog:
    """A run log as a command reads it."""

    path: Path
    records: tuple[AttemptRecord, ...]
    end: RunEnd | None
    """Its run-end record; None for a log that never got one (killed, or older)."""


def read_run(
    run: str | None, config_path: str | None, *, mode: str | None = None, what: str = ""
) -> ChosenLog:
    """The log of RUN (a run log path or a run id); by default the newest run that
    finished, of `mode` when given (unfinished ones are skipped, and named on stderr).

    A torn last line (an interrupted write) is reported on stderr and ignored.
    """
    from fcreplay.runlog import read_run_log

    path = locate_run(run, config_path, mode=mode, what=what)
    contents = read_run_log(path)
    if contents.torn_line is not None:
        click.echo(
            f"{path}:{contents.torn_line}: incomplete last record ignored (interrupted write)",
            err=True,
        )
    if run is not None and not contents.finished:
        state = contents.end.state if contents.end is not None else "it has no run-end record"
        click.echo(f"{path}: this run did not finish ({state}); reading it as named", err=True)
    if not contents.records:
        raise InputError.at(path, None, "the run log has no attempt records")
    return ChosenLog(path, contents.records, contents.end)


def locate_run(
    run: str | None, config_path: str | None, *, mode: str | None = None, what: str = ""
) -> Path:
    """Resolve RUN to a run log path (default: the newest finished run, of `mode`)."""
    from fcreplay.inputs.config import load_config
    from fcreplay.runlog import newest_finished_run, run_log_path

    if run is not None and Path(run).is_file():
        return Path(run)
    if run is not None and (run.endswith(".jsonl") or "/" in run or "\\" in run):
        raise InputError.at(
            run, None, "run log not found (give the path of an existing run log, or a run id)"
        )
    runs = load_config(config_path).runs
    if run is None:
        chosen = newest_finished_run(runs, mode)
        for log, end in chosen.unfinished:
            state = end.state if end is not None else "no run-end record: killed, or still running"
            click.echo(
                f"skipped run {log.stem}: it did not finish ({state}); "
                f"name it with --run {log.stem} to use it anyway",
                err=True,
            )
        if what:
            kind = f"newest finished {mode} run" if mode else "newest finished run"
            click.echo(f"{what}: run {chosen.path.stem} (the {kind})", err=True)
        return chosen.path
    path = run_log_path(runs, run)
    if not path.is_file():
        raise InputError.at(
            path, None, f"no run {run!r}: give a run id from {runs} or a path to a run log"
        )
    return path
