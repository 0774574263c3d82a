"""`fcreplay report`: metrics and the error table of a run log."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from fcreplay.commands.options import config_option

if TYPE_CHECKING:
    from fcreplay.commands.runarg import ChosenLog
    from fcreplay.golden.diff import GoldenDiff
    from fcreplay.inputs.prices import Price


@click.command("report")
@click.argument("run", required=False, metavar="[RUN]")
@config_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "csv", "markdown", "html"]),
    default="text",
    show_default=True,
    help="text: a terminal table; json: the metrics; csv: one row per finding; "
    "markdown: for pull requests; html: one self-contained page with the case matrix.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=str),
    help="Write the report to this file instead of standard output.",
)
def command(
    run: str | None, config_path: str | None, output_format: str, output: str | None
) -> bool:
    """Report the metrics of a run per target and variant.

    RUN is a run id or the path of a run log (default: the newest in the suite's
    runs folder). Every figure is recomputed from the run log alone; attempts
    with transport errors are counted apart and left out of the denominators.

    Every metric, its definition and denominator: docs/metrics.md.
    """
    from fcreplay.commands.output import echo, guard_of, write_output
    from fcreplay.commands.runarg import read_run
    from fcreplay.render.report import render

    guard = guard_of(config_path)
    chosen = read_run(run, config_path)
    path, records = chosen.path, chosen.records
    golden = _golden_diff(chosen, config_path) if output_format == "html" else None
    text = render(records, output_format, golden, _prices(config_path))
    if output:
        write_output(guard, output, text)
        echo(guard, f"report of {path} written to {output}")
    else:
        echo(guard, text, nl=False)
    return True


def _golden_diff(chosen: ChosenLog, config_path: str | None) -> GoldenDiff | None:
    """The run against the suite's goldens, when there is a suite and a golden folder."""
    from fcreplay.errors import InputError
    from fcreplay.golden.diff import diff_run
    from fcreplay.inputs.config import load_config

    try:
        folder = load_config(config_path).golden
    except InputError:
        return None  # a run log read without a suite (a proxy's, say)
    if not folder.is_dir():
        return None
    scope = chosen.end.scope if chosen.end is not None else None
    return diff_run(chosen.records, folder, scope=scope)


def _prices(config_path: str | None) -> dict[str, Price]:
    """The suite's token prices per model id, when there is a suite configuration."""
    from fcreplay.errors import InputError
    from fcreplay.inputs.config import load_config

    try:
        return dict(load_config(config_path).prices)
    except InputError:
        return {}
