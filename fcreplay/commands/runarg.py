"""Finding the run log a command reads: a path, a run id, or the newest run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from fcreplay.errors import InputError

if TYPE_CHECKING:
    from fcreplay.record import AttemptRecord


def read_run(run: str | None, config_path: str | None) -> tuple[Path, tuple[AttemptRecord, ...]]:
    """The path and records of RUN (a run log path or a run id; default: the newest run).

    A torn last line (an interrupted write) is reported on stderr and ignored.
    """
    from fcreplay.runlog import read_run_log

    path = locate_run(run, config_path)
    contents = read_run_log(path)
    if contents.torn_line is not None:
        click.echo(
            f"{path}:{contents.torn_line}: incomplete last record ignored (interrupted write)",
            err=True,
        )
    if not contents.records:
        raise InputError.at(path, None, "the run log has no attempt records")
    return path, contents.records


def locate_run(run: str | None, config_path: str | None) -> Path:
    """Resolve RUN to a run log path."""
    from fcreplay.inputs.config import load_config
    from fcreplay.runlog import newest_run_log, run_log_path

    if run is not None and Path(run).is_file():
        return Path(run)
    runs = load_config(config_path).runs
    if run is None:
        return newest_run_log(runs)
    path = run_log_path(runs, run)
    if not path.is_file():
        raise InputError.at(
            path, None, f"no run {run!r}: give a run id from {runs} or a path to a run log"
        )
    return path
