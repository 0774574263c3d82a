"""`fcreplay import bfcl`: write a suite from the Berkeley Function Calling Leaderboard's data."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("import")
def command() -> None:
    """Write a suite from a public benchmark's data.

    Details: docs/importing.md.
    """


@command.command("bfcl")
@click.option(
    "--data",
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="bfcl-eval's data folder (BFCL_v4_*.json and possible_answer/), an unpacked "
    "bfcl-eval wheel, or the wheel file.",
)
@click.option(
    "--category",
    "categories",
    multiple=True,
    required=True,
    metavar="NAME",
    help="A single-turn category: simple_python, multiple, parallel, parallel_multiple, "
    "their live_* twins, irrelevance, live_irrelevance. Repeat for several.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("bfcl-suite"),
    show_default=True,
    help="Folder to write the suite into.",
)
@click.option(
    "--limit", type=click.IntRange(1), help="Import at most this many entries per category."
)
@click.option(
    "--effect",
    type=click.Choice(["write", "read"]),
    default="write",
    show_default=True,
    help="Effect of every imported tool (BFCL does not say).",
)
@click.option("--force", is_flag=True, help="Write into a folder that already holds a suite.")
def bfcl(
    data: Path,
    categories: tuple[str, ...],
    output: Path,
    limit: int | None,
    effect: str,
    force: bool,
) -> bool:
    """Write a suite from BFCL v4 single-turn data (bfcl-eval, Apache-2.0).

    Each entry becomes a case with its own tools and, for the AST categories,
    an expectation under the bfcl rules (BFCL's possible answers, "" as may be
    omitted, its string standardisation and type and order rules); irrelevance
    entries expect no call. Function names with dots become underscores (the
    mapping is kept in contracts/bfcl_names.json); BFCL types become JSON Schema.

    The conversion and the agreement with BFCL's own checker: docs/importing.md.
    """
    from fcreplay.importers.bfcl import CONFIG, import_bfcl, write_suite

    if (output / CONFIG).exists() and not force:
        raise click.UsageError(f"{output} already holds a suite; pass --force to overwrite it")
    suite = import_bfcl(
        data, categories, limit=limit, effect="read" if effect == "read" else "write"
    )
    write_suite(suite, output)
    by_category = {c: sum(c in case["tags"] for case in suite.cases) for c in suite.categories}
    shown = ", ".join(f"{c} {n}" for c, n in by_category.items())
    click.echo(
        f"wrote {output}: {len(suite.cases)} cases ({shown}), {len(suite.tools)} tools; "
        f"{len(suite.notes)} schema changes so BFCL's answers fit, "
        f"{len(suite.skipped)} entries skipped"
    )
    for note in suite.notes:
        click.echo(f"  schema   {note}")
    for skipped in suite.skipped:
        click.echo(f"  skipped  {skipped}")
    click.echo(f"next: fcreplay lint --config {output / CONFIG}")
    return True
