"""`fcreplay lint`: load every suite file and report every problem."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from fcreplay.commands.options import config_option

if TYPE_CHECKING:
    from fcreplay.inputs.suite import Suite


@click.command("lint")
@config_option
@click.option(
    "--contract",
    "contract_path",
    type=click.Path(dir_okay=False, path_type=str),
    help="Check this contract file alone, against every available wire format (no suite needed).",
)
def command(config_path: str | None, contract_path: str | None) -> bool:
    """Check the contract, prompt, cases and tool results of a suite, and whether
    each configured target's provider accepts the contract.

    Input problems are printed as FILE:LINE: message; exit 2 when a file is
    unusable. Provider compatibility is checked per target (adapter and strict
    flag): tool-name rules, tool-count limits, the strict-mode subsets of OpenAI
    and Anthropic, Gemini's schema subsets. Each issue cites its provider rule.
    An error means the provider would reject the request: exit 1. Warnings (a
    keyword the provider may ignore, a constraint the adapter's transform moves
    or drops, a setting it cannot send) and notes never fail lint. With a
    simulator_script configured, cases the script does not answer are listed.

    The formats: docs/config.md, docs/cases.md, docs/tool-results.md.
    """
    from fcreplay.inputs.suite import load_suite
    from fcreplay.lint.prompt import prompt_version_warning
    from fcreplay.lint.suite import lint_suite

    if contract_path is not None:
        return _contract_alone(contract_path)
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
        moved = prompt_version_warning(suite)
        if moved is not None:
            click.echo(f"  warning  {moved}")
    click.echo(
        f"cases     {suite.config.cases}: {len(suite.cases)} cases, version {suite.cases_version}"
    )
    if suite.executor is not None:
        click.echo(f"results   {suite.config.tool_results}: {rules} rules")
    if suite.config.simulator_script is not None:
        _script_coverage(suite)
    issues = lint_suite(suite)
    for target in suite.config.targets:
        mine = [issue for issue in issues if issue.target == target.name]
        counts = ", ".join(
            _count(sum(1 for i in mine if i.level == level), level)
            for level in ("error", "warning", "note")
        )
        strict = "strict" if target.strict else "not strict"
        click.echo(f"provider  {target.name} ({target.adapter}, {strict}): {counts}")
        for issue in mine:
            click.echo(
                f"  {issue.level:<7}  {issue.pointer or '(request)'}: {issue.message}\n"
                f"           rule: {issue.rule}"
            )
    if not suite.config.targets:
        click.echo("provider  no targets configured: provider compatibility not checked")
    errors = sum(1 for issue in issues if issue.level == "error")
    warnings = sum(1 for issue in issues if issue.level == "warning")
    if errors:
        click.echo(
            f"lint: {_count(errors, 'provider-compatibility error')} (the provider would "
            f"reject the request), {_count(warnings, 'warning')}"
        )
        return False
    click.echo(
        "lint: no problems" + (f"; {_count(warnings, 'provider warning')}" if warnings else "")
    )
    return True


def _script_coverage(suite: Suite) -> None:
    from fcreplay.simulator.from_cases import uncovered
    from fcreplay.simulator.reader import load_script

    path = suite.config.simulator_script
    assert path is not None
    gaps = uncovered(load_script(path), suite)
    covered = len(suite.cases) - len({gap.case_id for gap in gaps})
    click.echo(f"script    {path}: {covered} of {len(suite.cases)} cases answered for every target")
    for gap in gaps:
        click.echo(f"  not scripted  {gap.case_id}: {gap.reason}")
    if gaps:
        click.echo("  (`fcreplay simulate --from-cases` answers them from the cases themselves)")


def _contract_alone(path: str) -> bool:
    from fcreplay.adapters.registry import adapters
    from fcreplay.inputs.config import Target
    from fcreplay.inputs.contract import load_contract
    from fcreplay.lint.suite import lint_target

    contract = load_contract(path)
    click.echo(
        f"contract  {contract.source}: {len(contract.tools)} tools, "
        f"hash {contract.contract_hash[:12]}"
    )
    errors = 0
    for adapter, _ in adapters():
        target = Target(name=adapter, adapter=adapter, model="lint")
        issues = lint_target(target, contract.tools)
        errors += sum(issue.level == "error" for issue in issues)
        counts = ", ".join(
            _count(sum(1 for i in issues if i.level == level), level)
            for level in ("error", "warning", "note")
        )
        click.echo(f"provider  {adapter} (not strict): {counts}")
        for issue in issues:
            click.echo(
                f"  {issue.level:<7}  {issue.pointer or '(request)'}: {issue.message}\n"
                f"           rule: {issue.rule}"
            )
    click.echo(
        f"lint: {_count(errors, 'provider-compatibility error')}" if errors else "lint: no problems"
    )
    return not errors


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
