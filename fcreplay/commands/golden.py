"""`fcreplay golden diff | update`: compare a run with the golden baselines, or update them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from fcreplay.commands.options import F, config_option

if TYPE_CHECKING:
    from fcreplay.cassettes.redaction import SecretGuard
    from fcreplay.golden.diff import GoldenDiff

_LISTED = 10
"""Entries listed by name per golden file; a first baseline would list hundreds."""

_RUN_HELP = "Run id or run log path (default: the newest finished run)."


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


def diff_output_options(function: F) -> F:
    """Add --format, --output, --max-chars and --full-output: how a decision diff is written."""
    for option in reversed(
        (
            click.option(
                "--format",
                "output_format",
                type=click.Choice(["text", "markdown", "json", "junit"]),
                default="text",
                show_default=True,
                help="markdown: ready to paste into a pull request; junit: XML for CI systems.",
            ),
            click.option(
                "--output",
                type=click.Path(dir_okay=False, path_type=str),
                help="Write to this file instead of standard output.",
            ),
            click.option(
                "--max-chars",
                type=click.IntRange(2000),
                default=60_000,
                show_default=True,
                help="markdown: the most characters written (a GitHub comment holds 65,536); "
                "what does not fit is summarised with counts.",
            ),
            click.option(
                "--full-output",
                type=click.Path(dir_okay=False, path_type=str),
                help="markdown: also write the whole diff, without the cap, to this file; the "
                "capped one points to it.",
            ),
        )
    ):
        function = option(function)
    return function


@command.command("diff")
@config_option
@click.option("--run", metavar="RUN", help=_RUN_HELP)
@golden_option
@diff_output_options
def diff(
    config_path: str | None,
    run: str | None,
    golden_dir: Path | None,
    output_format: str,
    output: str | None,
    max_chars: int,
    full_output: str | None,
) -> bool:
    """Compare a run with the golden baselines, case by case and variant by variant.

    Each differing entry is classed regression, fix, flaky, changed, stale (the
    recording is out of date: re-record it), new or missing, with argument-level
    differences and the evidence of new findings. Exit 1 when anything differs.

    Reviewing golden diffs in CI: docs/ci.md.
    """
    from fcreplay.commands.output import guard_of
    from fcreplay.commands.runarg import read_run
    from fcreplay.golden.diff import diff_run

    chosen = read_run(run, config_path)
    scope = chosen.end.scope if chosen.end is not None else None
    result = diff_run(chosen.records, _golden(golden_dir, config_path), scope=scope)
    write_diff(
        guard_of(config_path),
        result,
        output_format,
        output,
        max_chars=max_chars,
        full_output=full_output,
    )
    return result.clean


def write_diff(
    guard: SecretGuard,
    result: GoldenDiff,
    output_format: str,
    output: str | None,
    *,
    max_chars: int,
    full_output: str | None,
) -> None:
    """Write a decision diff in a format to a file or standard output (golden and run diffs)."""
    from fcreplay.commands.output import echo, write_output
    from fcreplay.render.golden import render
    from fcreplay.render.golden_markdown import render_markdown

    if output_format == "markdown":
        text = render_markdown(result, max_chars=max_chars, full_report=full_output)
        if full_output:
            write_output(guard, full_output, render_markdown(result, max_chars=None))
    else:
        text = render(result, output_format)
    if output:
        write_output(guard, output, text)
        echo(guard, f"diff written to {output}: {result.summary()}")
    else:
        echo(guard, text, nl=False)


@command.command("update")
@config_option
@click.option(
    "--run", metavar="RUN", help="Run id or run log path (default: the newest finished record run)."
)
@golden_option
@click.option("--target", "targets", multiple=True, metavar="NAME", help="Only this target.")
@click.option("--case", "case_ids", multiple=True, metavar="ID", help="Only this case.")
@click.option("--reason", required=True, help="Why the baseline changes (kept in provenance).")
@click.option(
    "--prune",
    is_flag=True,
    help="Also delete selected entries that the run has no attempt for (within what the "
    "run was asked to run).",
)
@click.option(
    "--allow-errors",
    is_flag=True,
    help="Also accept entries whose attempts errored or got no decision.",
)
def update(
    config_path: str | None,
    run: str | None,
    golden_dir: Path | None,
    targets: tuple[str, ...],
    case_ids: tuple[str, ...],
    reason: str,
    prune: bool,
    allow_errors: bool,
) -> bool:
    """Set golden entries from a run; entries that did not change stay byte-identical.

    Only the selected targets and cases change (default: all in the run). Entries
    whose attempts drifted are refused (re-record them first), and so are entries
    whose attempts errored or got no decision unless --allow-errors; when any is
    refused, no golden file changes and the exit code is 1.

    Reviewing and accepting changes: docs/ci.md.
    """
    from fcreplay.commands.output import echo, guard_of
    from fcreplay.commands.runarg import read_run
    from fcreplay.errors import InputError
    from fcreplay.golden.diff import in_scope
    from fcreplay.golden.refusals import refusals
    from fcreplay.golden.update import update_golden

    guard = guard_of(config_path)
    if not reason.strip():
        raise click.BadParameter("must say why", param_hint="--reason")
    chosen = read_run(run, config_path, mode="record", what="golden update")
    path, records = chosen.path, chosen.records
    for option, wanted, present in (
        ("--target", targets, {r.target for r in records}),
        ("--case", case_ids, {r.case_id for r in records}),
    ):
        unknown = sorted(set(wanted) - present)
        if unknown:
            raise InputError.at(
                path, None, f"{option} {unknown[0]!r}: the run has no attempt for it"
            )
    refused = refusals(records, targets=targets, case_ids=case_ids, allow_errors=allow_errors)
    if refused:
        for unit, why in refused[:_LISTED]:
            echo(guard, f"  refused {unit}: {why}", err=True)
        if len(refused) > _LISTED:
            echo(guard, f"  ... and {len(refused) - _LISTED} more", err=True)
        echo(
            guard,
            f"golden update: nothing changed; {len(refused)} selected "
            f"{'entry was' if len(refused) == 1 else 'entries were'} refused from run "
            f"{path.stem} (re-record them, pick others with --case/--target, or accept "
            "errors with --allow-errors)",
            err=True,
        )
        return False
    scope = chosen.end.scope if chosen.end is not None else None
    if prune and scope is not None and scope.shard is not None:
        raise InputError.at(
            path,
            None,
            f"--prune: the run is shard {scope.shard}, a part of the suite; prune from "
            "the log `fcreplay merge` makes of every shard's",
        )
    results = update_golden(
        _golden(golden_dir, config_path),
        records,
        reason=reason,
        targets=targets,
        case_ids=case_ids,
        prune=prune,
        guard=guard,
        in_scope=lambda key: in_scope(key, scope),
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
