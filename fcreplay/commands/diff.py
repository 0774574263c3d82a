"""`fcreplay diff RUN_A [RUN_B]`: the decision diff of two runs, no golden file read or written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from fcreplay.commands.golden import diff_output_options
from fcreplay.commands.options import config_option

if TYPE_CHECKING:
    from fcreplay.golden.compare import RunSide


def _pairs(values: Sequence[str]) -> tuple[tuple[str, str], ...]:
    found = []
    for value in values:
        before, sep, after = value.partition("=")
        if not sep or not before.strip() or not after.strip():
            raise click.BadParameter(
                f"{value!r}: expected TARGET_A=TARGET_B, e.g. --pair openai-main=anthropic-main",
                param_hint="--pair",
            )
        found.append((before.strip(), after.strip()))
    return tuple(found)


def _fail_on(value: str | None) -> tuple[str, ...]:
    from fcreplay.golden.diff import CLASSES

    if value is None:
        return CLASSES
    classes = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [name for name in classes if name not in CLASSES]
    if unknown or not classes:
        raise click.BadParameter(
            f"unknown class {unknown[0]!r} (known: {', '.join(CLASSES)})"
            if unknown
            else f"name at least one class of {', '.join(CLASSES)}",
            param_hint="--fail-on",
        )
    return classes


@click.command("diff")
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="[RUN_B]", required=False)
@config_option
@click.option(
    "--pair",
    "pairs",
    multiple=True,
    metavar="TARGET_A=TARGET_B",
    help="Compare target TARGET_A of RUN_A with target TARGET_B of RUN_B, e.g. two models "
    "configured as two targets (repeatable). Other targets pair by name.",
)
@click.option(
    "--fail-on",
    metavar="CLASSES",
    help="Comma-separated classes that make the exit code 1 (default: every class, as "
    "`golden diff`), e.g. --fail-on regression,missing.",
)
@diff_output_options
def command(
    config_path: str | None,
    run_a: str,
    run_b: str | None,
    pairs: tuple[str, ...],
    fail_on: str | None,
    output_format: str,
    output: str | None,
    max_chars: int,
    full_output: str | None,
) -> bool:
    """Compare the decisions of two runs, case by case and variant by variant.

    RUN_A is the baseline (before), RUN_B the candidate (after): each a run id or a
    run log path; RUN_B defaults to the newest finished run. RUN_A's entries are
    built as `golden update` would build them and RUN_B is diffed against them as
    `golden diff` diffs a run, with the same classes (regression, fix, flaky,
    changed, stale, new, missing) and formats. No golden file is read or written.

    Use it to compare two models or two prompt versions: a different prompt,
    contract, settings or adapter is what is compared, so the header states which
    inputs differ and the classes come from the decisions alone; an entry is stale
    only when a run could not replay it from its recordings. A run that did not
    finish is read only when named, with a warning.

    Exit 0 when nothing differs (in the --fail-on classes), 1 when something does,
    2 when a run cannot be found or read.

    Comparing models and prompt versions: docs/ci.md.

    \b
    Examples:
      fcreplay diff 20250301T101500000Z-record-a1b2c3 20250302T093000000Z-record-d4e5f6
      fcreplay diff runs/old.jsonl --format markdown --output run-diff.md
      fcreplay diff RUN RUN --pair sim-openai=sim-anthropic
    """
    from fcreplay.commands.golden import write_diff
    from fcreplay.commands.output import echo, guard_of
    from fcreplay.commands.runarg import read_run
    from fcreplay.golden.rundiff import diff_runs, run_side

    paired, failing = _pairs(pairs), _fail_on(fail_on)
    before = read_run(run_a, config_path)
    after = read_run(run_b, config_path, what="diff")
    sides: tuple[RunSide, RunSide] = (
        run_side("A", run_a, before.path, before.records, before.end),
        run_side("B", run_b or after.path.stem, after.path, after.records, after.end),
    )
    guard = guard_of(config_path)
    if before.path.resolve() == after.path.resolve() and not paired:
        echo(
            guard,
            f"diff: RUN_A and RUN_B are the same run ({before.path.stem}); nothing can differ "
            "unless --pair compares two of its targets",
            err=True,
        )
    scope = after.end.scope if after.end is not None else None
    result = diff_runs(before.records, after.records, sides=sides, pairs=paired, scope=scope)
    write_diff(guard, result, output_format, output, max_chars=max_chars, full_output=full_output)
    return not any(entry.kind in failing for entry in result.diffs)
