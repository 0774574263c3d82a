"""`fcreplay merge`: the run logs of every shard of a sharded check, merged into one."""

from __future__ import annotations

from pathlib import Path

import click

from fcreplay.commands.options import config_option


@click.command("merge")
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@config_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the merged log here (default: the suite's runs folder, named by its run id).",
)
def command(logs: tuple[Path, ...], config_path: str | None, out: Path | None) -> bool:
    """Merge the run logs of `fcreplay check --shard K/N`, one per shard, into one.

    The merged log is the one an unsharded check would have written (in plan order,
    with one run id), so `fcreplay check --from-run MERGED` gives the same report,
    golden diff and exit code as one unsharded `fcreplay check`. Refused (exit 2): a
    missing shard, a shard given twice, a log that did not finish, or one made from
    other inputs than the suite's now. CI fan-out and fan-in: docs/ci.md.
    """
    from fcreplay.commands.output import echo, guard_of
    from fcreplay.fanin import merge_shards
    from fcreplay.inputs.suite import load_suite

    for log in logs:
        if not log.is_file():
            raise click.BadParameter(f"{log}: run log not found", param_hint="LOGS")
    suite = load_suite(config_path)
    merged = merge_shards(suite, list(logs), out=out)
    echo(
        guard_of(str(suite.config.source)),
        f"merged {len(logs)} shard logs ({merged.attempts} attempts) into run "
        f"{merged.run_id} ({merged.path}); its verdict: "
        f"fcreplay check --from-run {merged.path}",
    )
    return True
