"""`fcreplay check`: the CI entry point; replay, schema diff, golden diff, exit 1 on failure."""

from __future__ import annotations

import click

from fcreplay.commands.options import config_option, jobs_option

MAX_SHOWN = 20
"""Golden differences listed in the output; the rest are in `fcreplay golden diff`."""


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
    default="regression,drift,schema,missing,new",
    show_default=True,
    callback=_fail_on,
    help="Comma-separated reasons to fail on: regression, drift, schema, missing, new, "
    "unsafe, flaky, changed.",
)
@jobs_option
def command(config_path: str | None, fail_on: tuple[str, ...], jobs: int | None) -> bool:
    """Replay the suite offline and compare it with the golden baselines.

    Replays every cassette (writing a run log), diffs the tool schemas that were
    sent against the contract, compares each case and variant with its golden
    entry and prints the key metrics. Exit 1 when a --fail-on reason occurs.

    CI setup and --fail-on: docs/ci.md; the printed metrics: docs/metrics.md.
    """
    from fcreplay.check import run_check
    from fcreplay.inputs.suite import load_suite
    from fcreplay.render.report import render_text
    from fcreplay.render.schemadiff import render

    suite = load_suite(config_path)
    result = run_check(suite, fail_on=fail_on, processes=jobs)
    click.echo(f"replayed run {result.run.run_id} ({result.run.log_path})")
    click.echo(render_text(result.report), nl=False)
    for record in result.run.problems[:MAX_SHOWN]:
        click.echo(f"drift: {record.unit} #{record.attempt}: {record.problem}")
    if result.schema.blocking:
        click.echo(render(result.schema, "text"), nl=False)
    shown = [d for d in result.golden.diffs if d.kind in fail_on][:MAX_SHOWN]
    for diff in shown:
        click.echo(f"golden {diff.kind}: {diff.label}")
    click.echo(result.summary())
    return result.ok
