"""`fcreplay inspect`: the normalized decision of every interaction of any recording."""

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

    PATH is a recording (vcrpy YAML or JSON from any tool, Ruby VCR, HAR 1.2,
    pydantic-ai's layouts) or a folder of them. Every interaction gets one line in
    file order, also the ones that cannot be read, and a file that cannot be read
    at all gets one line naming it and why; the other files still come out. Exit
    0 when at least one file was read, 2 when none was.

    Wire formats and what is read from them: docs/providers.md.
    """
    import json

    from fcreplay.cassettes.inspection import (
        expand_paths,
        inspect_file,
        render_text,
        unreadable_file,
    )
    from fcreplay.cassettes.redaction import SecretGuard
    from fcreplay.commands.output import echo
    from fcreplay.errors import InputError, Problem

    guard = SecretGuard()  # no suite here: the key shapes
    problems: list[Problem] = []
    files = list(expand_paths(list(paths)))
    for path in files:
        try:
            records = inspect_file(path)
        except InputError as exc:
            problems.extend(exc.problems)
            records = [unreadable_file(problem) for problem in exc.problems]
        for record in records:
            if output_format == "json":
                echo(guard, json.dumps(record, ensure_ascii=False))
            else:
                echo(guard, render_text(record))
    if problems and len(problems) >= len(files):
        raise InputError(problems)
    if problems:
        click.echo(
            f"inspect: {len(problems)} of {len(files)} files could not be read (their lines "
            "say why); the others were read, so the exit code is 0",
            err=True,
        )
    return True
