"""`fcreplay check`: the CI entry point; replay, schema diff, golden diff, exit 1 on failure."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

import fcreplay.collector as collector
from fcreplay.commands.options import config_option, jobs_option
from fcreplay.commands.running import problem_lines

if TYPE_CHECKING:
    from fcreplay.check import CheckResult
    from fcreplay.inputs.config import SuiteConfig
    from fcreplay.shards import Shard

MAX_SHOWN = 20
"""Drifted units and golden differences listed; the rest are counted, with where to look."""


SUITE_FAIL_ON = "stale,regression,drift,schema,missing,new"


def _shard(value: str | None) -> Shard | None:
    if value is None:
        return None
    from fcreplay.shards import parse_shard

    try:
        return parse_shard(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--shard") from None


def parse_reasons(value: str) -> tuple[str, ...]:
    """--fail-on's reasons; a bad one is a usage error."""
    from fcreplay.check import parse_fail_on

    return _parse(parse_fail_on, value)


def _parse(parse: Callable[[str], tuple[str, ...]], value: str) -> tuple[str, ...]:
    try:
        return parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--fail-on") from None


@click.command("check")
@config_option
@click.option(
    "--fail-on",
    default=SUITE_FAIL_ON,
    show_default=True,
    help="Comma-separated reasons to fail on: stale, regression, drift, schema, missing, "
    "new, unsafe, flaky, changed. With --cassette-dir: schema, history, failed, error and the "
    "golden classes (default there: schema,history,regression,missing,new).",
)
@jobs_option
@click.option(
    "--cassette-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Judge the cassettes in this folder (recorded by `fcreplay proxy` or any client) "
    "instead of replaying the suite; needs --contract.",
)
@click.option(
    "--contract",
    "contract_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --cassette-dir: the canonical tool contract the cassettes are held to.",
)
@click.option(
    "--golden",
    "golden_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="With --cassette-dir: compare the decisions with the golden files in this folder.",
)
@click.option(
    "--allow",
    multiple=True,
    metavar="CLASS",
    help="With --cassette-dir: a schema-diff class not to fail on (repeatable).",
)
@click.option(
    "--runs",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs"),
    show_default=True,
    help="With --cassette-dir: the folder of the run log it writes.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Replay every unit, even those the check cache knows unchanged (the cache is "
    "still written).",
)
@click.option(
    "--shard",
    metavar="K/N",
    help="Only shard K of N (units are assigned by name): one CI job per shard, then "
    "`fcreplay merge` their run logs and `fcreplay check --from-run` the result.",
)
@click.option(
    "--from-run",
    "from_run",
    metavar="RUN",
    help="Give the verdict of this run log (a path or a run id, e.g. one `fcreplay merge` "
    "wrote) instead of replaying: the same report, golden diff and exit code.",
)
def command(
    config_path: str | None,
    fail_on: str,
    jobs: int | None,
    cassette_dir: Path | None,
    contract_path: Path | None,
    golden_dir: Path | None,
    allow: tuple[str, ...],
    runs: Path,
    no_cache: bool,
    shard: str | None,
    from_run: str | None,
) -> bool:
    """Replay the suite offline and compare it with the golden baselines.

    Replays every cassette (writing a run log), diffs the tool schemas that were
    sent against the contract, compares each case and variant with its golden
    entry and prints the key metrics. Exit 1 when a --fail-on reason occurs.

    With --cassette-dir DIR --contract FILE, judges a cassette set recorded by any
    client instead: each model exchange's decision and calls, the tools each
    request sent against the contract, the tool-loop history of each request,
    and (with --golden) the decisions against the golden baselines.

    CI setup and --fail-on: docs/ci.md; the printed metrics: docs/metrics.md.
    """
    if cassette_dir is not None or contract_path is not None:
        from fcreplay.commands.check_cassettes import check_cassettes

        if shard is not None or from_run is not None or no_cache:
            raise click.UsageError(
                "--shard, --from-run and --no-cache check a suite, not --cassette-dir"
            )

        if cassette_dir is None or contract_path is None:
            raise click.UsageError("--cassette-dir and --contract go together")
        ctx = click.get_current_context()
        given = ctx.get_parameter_source("fail_on") is not click.core.ParameterSource.DEFAULT
        return check_cassettes(
            cassette_dir, contract_path, golden_dir, allow, runs, fail_on if given else None
        )
    # Loading the modules and the suite builds much and no cycles worth walking for.
    with collector.paused():
        return _check_suite(config_path, fail_on, jobs, no_cache, shard, from_run)


def _check_suite(
    config_path: str | None,
    fail_on: str,
    jobs: int | None,
    no_cache: bool,
    shard: str | None,
    from_run: str | None,
) -> bool:
    from fcreplay.check import parse_fail_on, run_check
    from fcreplay.inputs.suite import load_suite

    reasons = _parse(parse_fail_on, fail_on)
    chosen = _shard(shard)
    if from_run is not None and chosen is not None:
        raise click.UsageError("--from-run gives the verdict of a run log: it takes no --shard")
    suite = load_suite(config_path, cache=not no_cache)
    if from_run is not None:
        from fcreplay.commands.runarg import locate_run
        from fcreplay.fanin import check_run_log

        result = check_run_log(suite, locate_run(from_run, config_path), fail_on=reasons)
    else:
        result = run_check(suite, fail_on=reasons, processes=jobs, cache=not no_cache, shard=chosen)
    return show_result(result, suite.config)


def show_result(result: CheckResult, config: SuiteConfig) -> bool:
    """Print what `fcreplay check` prints of `result` and return whether it passes."""
    from fcreplay.commands.output import echo, suite_guard
    from fcreplay.render.report import render_text
    from fcreplay.render.schemadiff import render

    guard = suite_guard(config)
    for note in result.counted.notes if result.counted else ():
        click.echo(note, err=True)
    headline = result.headline()
    if headline is not None:
        echo(guard, headline)
    echo(guard, f"replayed run {result.run.run_id} ({result.run.log_path})")
    echo(guard, render_text(result.report), nl=False)
    for line in problem_lines(result, MAX_SHOWN):
        echo(guard, line)
    if result.schema.blocking:
        echo(guard, render(result.schema, "text"), nl=False)
    failing = [d for d in result.golden.diffs if d.kind in result.fail_on and d.kind != "stale"]
    for diff in failing[:MAX_SHOWN]:
        echo(guard, f"golden {diff.kind}: {diff.label}")
    if len(failing) > MAX_SHOWN:
        echo(
            guard,
            f"… and {len(failing) - MAX_SHOWN} more golden differences "
            "(`fcreplay golden diff` lists them all)",
        )
    echo(guard, result.summary())
    return result.ok
