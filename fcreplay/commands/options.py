"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def config_option(function: F) -> F:
    """Add `--config PATH` (default: fcreplay.toml or pyproject.toml, here or above)."""
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=str),
        default=None,
        help="Suite configuration file (default: fcreplay.toml or pyproject.toml "
        "with [tool.fcreplay], searched from the current folder upwards).",
    )(function)


def jobs_option(function: F) -> F:
    """Add `--jobs N`: worker processes for a replay."""
    return click.option(
        "--jobs",
        type=click.IntRange(1, 256),
        default=None,
        help="Worker processes for the replay (default: one per CPU once the suite "
        "is large enough to gain from it).",
    )(function)
