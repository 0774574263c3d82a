"""`fcreplay merge`: the run logs of every shard of a sharded check, merged into one."""

from __future__ import annotations

from pathlib import Path

import click

from fcreplay.commands.check import SUITE_FAIL_ON
from fcreplay.commands.options import config_option


@click.command("merge")
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@config_option
@click.option(
    "--output",
    "--out",
    "output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the merged log here (default: the suite's runs folder, named by its run id).",
)
@click.option(
    "--fail-on",
    default=SUITE_FAIL_ON,
    show_default=True,
    help="The reasons to fail on, as for `fcreplay check`.",
)
def command(
    logs: tuple[Path, ...], config_path: str | None, output: Path | None, fail_on: str
) -> bool:
    """Merge the run logs of `fcreplay check --shard K/N`, one per shard, and give the verdict.

    The merged log is the one an unsharded check would have written (in plan order,
    with one run id), and what is printed, and the exit code, are those of one
    unsharded `fcreplay check` (`fcreplay check --from-run MERGED` gives them again).
    Refused (exit 2): a missing shard, a shard given twice, a log that did not finish,
    or one made from other inputs than the suite's now. CI fan-out and fan-in:
    docs/ci.md.
    """
    from fcreplay.commands.check import parse_reasons, show_result
    from fcreplay.fanin import check_merged, merge_shards
    from fcreplay.inputs.suite import load_suite

    reasons = parse_reasons(fail_on)
    for log in logs:
        if not log.is_file():
            raise click.BadParameter(f"{log}: run log not found", param_hint="LOGS")
    suite = load_suite(config_path)
    merged = merge_shards(suite, list(logs), out=output)
    click.echo(
        f"merged {len(logs)} shard logs ({merged.attempts} attempts) into {merged.path}",
        err=True,
    )
    return show_result(check_merged(suite, merged, fail_on=reasons), suite.config)
