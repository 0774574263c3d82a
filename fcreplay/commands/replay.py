"""`fcreplay replay`: the suite from cassettes, offline; fails on drift or a missing cassette."""

from __future__ import annotations

import click

from fcreplay.commands.options import config_option, jobs_option
from fcreplay.commands.running import problem_lines, selection_options, summarize


@click.command("replay")
@config_option
@selection_options
@click.option(
    "--cassettes",
    "cassettes_dir",
    type=click.Path(file_okay=False),
    help="Cassette folder (default: the suite's).",
)
@jobs_option
def command(
    config_path: str | None,
    targets: tuple[str, ...],
    case_ids: tuple[str, ...],
    variants: tuple[str, ...],
    concurrency: int,
    cassettes_dir: str | None,
    jobs: int | None,
) -> bool:
    """Replay the suite from its cassettes without touching the network.

    Each request is rebuilt by the adapter and compared with the recorded one;
    a difference is request drift, shown path by path. Exit 1 on drift or a
    missing cassette (with the `fcreplay record` command that creates it).

    Suite settings: docs/config.md; what is judged: docs/cases.md.
    """
    from pathlib import Path

    from fcreplay.commands.output import echo, suite_guard
    from fcreplay.engine.runner import ReplayOptions, replay
    from fcreplay.inputs.suite import load_suite

    suite = load_suite(config_path)
    guard = suite_guard(suite.config)
    result = replay(
        suite,
        ReplayOptions(
            targets=targets,
            variants=variants,
            case_ids=case_ids,
            concurrency=concurrency,
            cassettes_dir=Path(cassettes_dir) if cassettes_dir else None,
            processes=jobs,
        ),
    )
    echo(guard, f"replayed run {result.run_id}")
    for line in summarize(result):
        echo(guard, line)
    for line in problem_lines(result):
        echo(guard, f"  {line}", err=True)
    return not result.problems
