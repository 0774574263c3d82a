"""`fcreplay contract import`: write a canonical contract from another tool format."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.group("contract")
def command() -> None:
    """The canonical tool contract: import it from other formats.

    The contract format: docs/cases.md (tools) and docs/importing.md.
    """


@command.command("import")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True, path_type=str))
@click.option(
    "--from",
    "source_format",
    default="auto",
    show_default=True,
    metavar="FORMAT",
    help="mcp (a tools/list result) or an adapter name (its request's tools array); "
    "auto detects it.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the contract here (default: standard output, the report on standard error).",
)
@click.option(
    "--effect",
    type=click.Choice(["write", "read"]),
    default="write",
    show_default=True,
    help="Effect of every tool not named by --read. write is the safe default: a read "
    "tool wrongly marked write shows up as unsafe calls, the reverse hides them.",
)
@click.option("--read", "read", multiple=True, metavar="NAME", help="Mark this tool read.")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
def import_(
    source: str,
    source_format: str,
    output: Path | None,
    effect: str,
    read: tuple[str, ...],
    force: bool,
) -> bool:
    """Convert SOURCE (a JSON file, or - for standard input) into a canonical contract.

    SOURCE is an MCP server's tools/list result (inputSchema), or a provider's
    tools: an OpenAI chat or Responses `tools` array, an Anthropic `tools` array
    or a Gemini tools entry with its function declarations, or a whole request
    body holding them. Every tool gets effect write unless --read or --effect
    says otherwise: set `effect` yourself. What did not convert is listed.

    Details: docs/importing.md.
    """
    from fcreplay.atomic import write_text_atomically
    from fcreplay.errors import InputError
    from fcreplay.importers.contract import AUTO, formats, import_contract
    from fcreplay.sources import parse_json, read_text

    known = formats()
    if source_format not in (AUTO, *known):
        raise click.BadParameter(
            f"{source_format!r} (known: {AUTO}, {', '.join(known)})", param_hint="--from"
        )
    path = Path(source)
    text = sys.stdin.read() if source == "-" else read_text(path)
    document = parse_json(text, path)
    try:
        imported = import_contract(
            document,
            source_format=source_format,
            effect="read" if effect == "read" else "write",
            read=read,
        )
    except ValueError as exc:
        raise InputError.at(path, None, f"{exc}") from None
    if output is not None and output.exists() and not force:
        raise click.UsageError(f"{output} exists; pass --force to overwrite it")
    contract = json.dumps(imported.to_json(), ensure_ascii=False, indent=2) + "\n"
    report = click.echo if output is not None else _to_stderr
    if output is None:
        click.echo(contract, nl=False)
    else:
        write_text_atomically(output, contract)
    read_tools = [tool.name for tool in imported.tools if tool.effect == "read"]
    report(
        f"imported {len(imported.tools)} tool{'' if len(imported.tools) == 1 else 's'} "
        f"from {imported.source_format}"
        + (f" into {output}" if output is not None else "")
        + f"; effect read: {', '.join(read_tools) or 'none'}, write: the others "
        "(check each `effect`: a write tool called without clear intent is an unsafe call)"
    )
    for item in imported.unconverted:
        named = f" ({item.name})" if item.name else ""
        report(f"  not converted  {item.where}{named}: {item.reason}")
    for note in imported.notes:
        report(f"  note  {note}")
    return True


def _to_stderr(message: str) -> None:
    click.echo(message, err=True)
