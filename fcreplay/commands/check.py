"""`fcreplay check`: the CI entry point; replay, schema diff, golden diff, exit 1 on failure."""

from __future__ import annotations

import click

from fcreplay.commands.options import config_option, jobs_option
from fcreplay.commands.running import problem_lines

MAX_SHOWN = 20
"""Drifted units and golden differences listed; the rest are counted, with where to look."""


def _fail_on(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    from fcreplay.check import parse_fail_on

    try:
        return parse_fail_on(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


@click.command("check")
@config_option
@click.option(
    "--fail-on",
    default="stale,regression,drift,schema,missing,new",
    show_default=True,
    callback=_fail_on,
    help="Comma-separated reasons to fail on: stale, regression, drift, schema, missing, "
    "new, unsafe, flaky, changed.",
)
@jobs_option
def command(config_path: str | None, fail_on: tuple[str, ...], jobs: int | None) -> bool:
    """Replay the suite offline and compare it with the golden baselines.

    Replays every cassette (writing a run log), diffs the tool schemas that were
    sent against the contract, compares each case and variant with its golden
    entry and prints the key metrics. Exit 1 when a --fail-on reason occurs.
    """
    from fcreplay.check import run_check
    from fcreplay.inputs.suite import load_suite
    from fcreplay.render.report import render_text
    from fcreplay.render.schemadiff import render

    suite = load_suite(config_path)
    result = run_check(suite, fail_on=fail_on, processes=jobs)
    headline = result.headline()
    if headline is not None:
        click.echo(headline)
    click.echo(f"replayed run {result.run.run_id} ({result.run.log_path})")
    click.echo(render_text(result.report), nl=False)
    for line in problem_lines(result.run, MAX_SHOWN):
        click.echo(line)
    if result.schema.blocking:
        click.echo(render(result.schema, "text"), nl=False)
    failing = [d for d in result.golden.diffs if d.kind in fail_on and d.kind != "stale"]
    for diff in failing[:MAX_SHOWN]:
        click.echo(f"golden {diff.kind}: {diff.label}")
    if len(failing) > MAX_SHOWN:
        click.echo(
            f"… and {len(failing) - MAX_SHOWN} more golden differences "
            "(`fcreplay golden diff` lists them all)"
        )
    click.echo(result.summary())
    return result.ok
