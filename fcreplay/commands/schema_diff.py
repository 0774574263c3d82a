"""`fcreplay schema-diff`: the tool schemas recorded requests sent, against the contract."""

from __future__ import annotations

import click

from fcreplay.commands.options import config_option
from fcreplay.schemadiff.classes import ALLOWABLE  # light: deepdiff loads when a diff runs


@click.command("schema-diff")
@config_option
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="NAME",
    help="Only this target (repeatable; default: all configured).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text for a terminal, json for tools, markdown for a pull-request comment.",
)
@click.option(
    "--allow",
    "allow",
    multiple=True,
    type=click.Choice(ALLOWABLE),
    help="Do not fail on this class of difference (repeatable; adds to the suite's "
    "schema_diff_allow).",
)
@click.option(
    "--cassettes",
    "cassettes_dir",
    type=click.Path(file_okay=False),
    help="Cassette folder (default: the suite's).",
)
@click.option(
    "--contract",
    "contract_path",
    type=click.Path(dir_okay=False),
    help="Diff against this contract the tools sent in the cassettes of --cassettes (any "
    "client's, e.g. recorded by `fcreplay proxy`), without a suite configuration.",
)
def command(
    config_path: str | None,
    targets: tuple[str, ...],
    fmt: str,
    allow: tuple[str, ...],
    cassettes_dir: str | None,
    contract_path: str | None,
) -> bool:
    """Diff the tool declarations every recorded request sent against the contract.

    Each request's tools are read back to JSON Schema by its adapter and compared
    with the tools its variant should send (in order), and its tool choice and
    parallel policy with the unit's settings. Every difference is classed:
    lossless (representation only), constraint_lost, semantic_change,
    description_changed, tool_missing, tool_extra, order_changed,
    tool_choice_mismatch or parallel_mismatch, and identical differences across
    requests are folded into one line with a count and an example cassette.

    Exit 0 when every difference is lossless or allowed (--allow, or
    schema_diff_allow = [...] in the suite configuration), 1 otherwise, 2 when
    the configuration or a cassette file is unusable.
    """
    from pathlib import Path

    if contract_path is not None:
        from fcreplay.commands.check_cassettes import schema_diff_cassettes

        if cassettes_dir is None:
            raise click.UsageError("--contract needs --cassettes DIR")
        return schema_diff_cassettes(Path(cassettes_dir), Path(contract_path), allow, fmt)
    from fcreplay.inputs.suite import load_suite
    from fcreplay.render.schemadiff import render
    from fcreplay.schemadiff.differ import schema_diff

    suite = load_suite(config_path)
    result = schema_diff(
        suite,
        targets=targets,
        cassettes=Path(cassettes_dir) if cassettes_dir else None,
        allow=allow,
    )
    click.echo(render(result, fmt), nl=False)
    return result.ok
