"""`fcreplay replay`: the suite from cassettes, offline; fails on drift or a missing cassette."""

from __future__ import annotations

import click

from .options import config_option
from .running import selection_options, summarize


@click.command("replay")
@config_option
@selection_options
@click.option(
    "--cassettes",
    "cassettes_dir",
    type=click.Path(file_okay=False),
    help="Cassette folder (default: the suite's).",
)
def command(
    config_path: str | None,
    targets: tuple[str, ...],
    case_ids: tuple[str, ...],
    variants: tuple[str, ...],
    concurrency: int,
    cassettes_dir: str | None,
) -> bool:
    """Replay the suite from its cassettes without touching the network.

    Each request is rebuilt by the adapter and compared with the recorded one;
    a difference is request drift, shown path by path. Exit 1 on drift or a
    missing cassette (with the `fcreplay record` command that creates it).
    """
    from pathlib import Path

    from ..runner import RunOptions, run_suite
    from ..suite import load_suite

    suite = load_suite(config_path)
    result = run_suite(
        suite,
        RunOptions(
            mode="replay",
            targets=targets,
            variants=variants,
            case_ids=case_ids,
            concurrency=concurrency,
            cassettes_dir=Path(cassettes_dir) if cassettes_dir else None,
        ),
    )
    click.echo(f"replayed run {result.run_id}")
    for line in summarize(result):
        click.echo(line)
    problems = result.problems
    for record in problems[:20]:
        error = record["transport_error"]
        drift = next((f for f in record["findings"] if f["code"] == "request_drift"), None)
        message = drift["message"] if drift else error["message"]
        click.echo(
            f"  {record['target']}/{record['variant']}/{record['case_id']} "
            f"#{record['attempt']}: {message}",
            err=True,
        )
    if len(problems) > 20:
        click.echo(f"  ... and {len(problems) - 20} more", err=True)
    return not problems


def _show(change: dict[str, object], side: str) -> str:
    import json

    if change.get(f"{side}_missing"):
        return "(missing)"
    text = json.dumps(change[side], ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."
