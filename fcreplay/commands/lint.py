"""`fcreplay lint`: load every suite file and report every problem."""

from __future__ import annotations

import click

from .options import config_option


@click.command("lint")
@config_option
def command(config_path: str | None) -> bool:
    """Check the contract, prompt, cases and tool results of a suite.

    Every problem is printed as FILE:LINE: message. Exit 0 when the suite is
    usable, 2 when something must be fixed first.
    """
    from ..suite import load_suite

    suite = load_suite(config_path)
    contract = suite.contract
    rules = len(suite.executor.rules) if suite.executor else 0
    click.echo(
        f"contract  {contract.source}: {len(contract.tools)} tools "
        f"({', '.join(contract.names)}), hash {contract.contract_hash[:12]}"
    )
    if suite.system_prompt is not None:
        click.echo(
            f"prompt    {suite.config.system_prompt}: {suite.config.prompt_version}, "
            f"{len(suite.system_prompt)} characters"
        )
    click.echo(
        f"cases     {suite.config.cases}: {len(suite.cases)} cases, version {suite.cases_version}"
    )
    if suite.executor is not None:
        click.echo(f"results   {suite.config.tool_results}: {rules} rules")
    click.echo("lint: no problems")
    return True
