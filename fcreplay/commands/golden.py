"""`fcreplay golden diff | update`: compare a run with the golden baselines, or update them."""

from __future__ import annotations

from pathlib import Path

import click

from fcreplay.commands.options import F, config_option

_LISTED = 10
"""Entries listed by name per golden file; a first baseline would list hundreds."""

_RUN_HELP = "Run id or run log path (default: the newest run)."


def golden_option(function: F) -> F:
    """Add `--golden DIR`: the golden folder, so a run log needs no suite configuration."""
    return click.option(
        "--golden",
        "golden_dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Golden folder (default: the suite's). With --run PATH no configuration is "
        "needed, e.g. for the run log of `fcreplay proxy`.",
    )(function)


def _golden(golden_dir: Path | None, config_path: str | None) -> Path:
    from fcreplay.inputs.config import load_config

    return golden_dir if golden_dir is not None else load_config(config_path).golden


@click.group("golden")
def command() -> None:
    """Golden baselines of normalized decisions, one file per target.

    The golden file format: fcreplay/golden/store.py; reviewing diffs in CI: docs/ci.md.
    """


@command.command("diff")
@config_option
@click.option("--run", metavar="RUN", help=_RUN_HELP)
@golden_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown", "json", "junit"]),
    default="text",
    show_default=True,
    help="markdown: ready to paste into a pull request; junit: XML for CI systems.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=str),
    help="Write to this file instead of standard output.",
)
def diff(
    config_path: str | None,
    run: str | None,
    golden_dir: Path | None,
    output_format: str,
    output: str | None,
) -> bool:
    """Compare a run with the golden baselines, case by case and variant by variant.

    Each differing entry is classed regression, fix, changed, flaky, new or
    missing, with argument-level differences. Exit 1 when anything differs.

    Reviewing golden diffs in CI: docs/ci.md.
    """
    from fcreplay.commands.output import echo, guard_of, write_output
    from fcreplay.commands.runarg import read_run
    from fcreplay.golden.diff import diff_run
    from fcreplay.render.golden import render

    guard = guard_of(config_path)
    _, records = read_run(run, config_path)
    result = diff_run(records, _golden(golden_dir, config_path))
    text = render(result, output_format)
    if output:
        write_output(guard, output, text)
        echo(guard, f"golden diff written to {output}: {result.summary()}")
    else:
        echo(guard, text, nl=False)
    return result.clean


@command.command("update")
@config_option
@click.option("--run", metavar="RUN", help=_RUN_HELP)
@golden_option
@click.option("--target", "targets", multiple=True, metavar="NAME", help="Only this target.")
@click.option("--case", "case_ids", multiple=True, metavar="ID", help="Only this case.")
@click.option("--reason", required=True, help="Why the baseline changes (kept in provenance).")
@click.option(
    "--prune",
    is_flag=True,
    help="Also delete selected entries that the run has no attempt for.",
)
def update(
    config_path: str | None,
    run: str | None,
    golden_dir: Path | None,
    targets: tuple[str, ...],
    case_ids: tuple[str, ...],
    reason: str,
    prune: bool,
) -> bool:
    """Set golden entries from a run; entries that did not change stay byte-identical.

    Only the selected targets and cases change (default: all in the run).

    Reviewing and accepting changes: docs/ci.md.
    """
    from fcreplay.commands.output import echo, guard_of
    from fcreplay.commands.runarg import read_run
    from fcreplay.errors import InputError
    from fcreplay.golden.store import update_golden

    guard = guard_of(config_path)
    path, records = read_run(run, config_path)
    for option, wanted, present in (
        ("--target", targets, {r.target for r in records}),
        ("--case", case_ids, {r.case_id for r in records}),
    ):
        unknown = sorted(set(wanted) - present)
        if unknown:
            raise InputError.at(
                path, None, f"{option} {unknown[0]!r}: the run has no attempt for it"
            )
    if not reason.strip():
        raise click.BadParameter("must say why", param_hint="--reason")
    results = update_golden(
        _golden(golden_dir, config_path),
        records,
        reason=reason,
        targets=targets,
        case_ids=case_ids,
        prune=prune,
        guard=guard,
    )
    for result in results:
        removed = f", {len(result.removed)} removed" if result.removed else ""
        echo(
            guard,
            f"{result.path}: {len(result.updated)} updated, {result.unchanged} unchanged{removed}",
        )
        for case_id, variant in result.updated[:_LISTED]:
            echo(guard, f"  updated {result.target}/{variant}/{case_id}")
        if len(result.updated) > _LISTED:
            echo(guard, f"  ... and {len(result.updated) - _LISTED} more")
    changed = sum(len(r.updated) + len(r.removed) for r in results)
    noun = "entry" if changed == 1 else "entries"
    echo(guard, f"golden update: {changed} {noun} changed from run {path.stem}")
    return True
