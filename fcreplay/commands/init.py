"""`fcreplay init [DIR]`: write a small working suite to start from."""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import click

TEMPLATE = "bugtracker"
"""The starter suite shipped in fcreplay/templates/."""


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
def command(directory: Path, force: bool) -> bool:
    """Write a starter suite into DIRECTORY (default: the current folder).

    A bug tracker with four tools (reads and writes), cases covering a call,
    parallel calls, a clarification, a write, a tool error and what must follow
    it, fake tool results, and fcreplay.toml with simulator targets for all four
    wire formats. It runs with no edits: `fcreplay simulate --from-cases` in one
    shell, then `fcreplay record`, `fcreplay golden update --reason init` and
    `fcreplay check` in another.

    The formats of the files: docs/config.md, docs/cases.md, docs/tool-results.md.
    """
    from fcreplay.atomic import write_text_atomically

    source = files("fcreplay").joinpath("templates", TEMPLATE)
    planned = dict(_walk(source, Path()))
    existing = sorted(str(path) for path in planned if (directory / path).exists())
    if existing and not force:
        raise click.UsageError(
            f"{directory} already has {', '.join(existing)}; choose an empty folder "
            "or pass --force to overwrite"
        )
    for relative, text in planned.items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(target, text)
        click.echo(f"wrote {target}")
    where = "" if directory == Path() else f"cd {directory} && "
    click.echo(
        "next, in one shell:    " + where + "fcreplay simulate --from-cases\n"
        "and in another:        " + where + "fcreplay record && fcreplay golden update "
        "--reason init && fcreplay check\n"
        "then edit the contract and cases (docs/cases.md); set a target's model to "
        "fcreplay-sim-sloppy to see what failures look like"
    )
    return True


def _walk(folder: Traversable, at: Path) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for item in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if item.is_dir():
            found += _walk(item, at / item.name)
        elif not item.name.startswith((".", "__")):
            found.append((at / item.name, item.read_text(encoding="utf-8")))
    return found
