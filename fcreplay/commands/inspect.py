"""`fcreplay inspect`: the normalized decision of every interaction of any vcrpy cassette."""

from __future__ import annotations

import click


@click.command("inspect")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: one readable line per interaction; json: one JSON object per line.",
)
def command(paths: tuple[str, ...], output_format: str) -> bool:
    """Show what the model decided in each recorded interaction of cassettes.

    PATH is a vcrpy cassette (YAML or JSON, any recording tool) or a folder of
    them. Every interaction gets one line in file order, also the ones that
    cannot be read. Exit 0, or 2 when a file cannot be opened at all (the other
    files are still shown).

    Wire formats and what is read from them: docs/providers.md.
    """
    import json

    from fcreplay.cassettes.inspection import expand_paths, inspect_file, render_text
    from fcreplay.errors import InputError, Problem

    problems: list[Problem] = []
    for path in expand_paths(list(paths)):
        try:
            records = inspect_file(path)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        for record in records:
            if output_format == "json":
                click.echo(json.dumps(record, ensure_ascii=False))
            else:
                click.echo(render_text(record))
    if problems:
        raise InputError(problems)
    return True
