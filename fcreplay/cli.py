"""The `fcreplay` command line: lazy subcommands and the one place exit codes are decided.

Exit codes: 0 all good; 1 findings (regression, drift, failed check, refused
secret); 2 usage, configuration or input error. No traceback for an expected error.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import fcreplay.collector as collector
import fcreplay.methodcache as methodcache

# What these imports build all lives on: the collector would walk it about twenty-five
# times for nothing (4 ms of every command's start).
with collector.paused():
    import click

    from fcreplay.errors import FcreplayError, InputError, SecretLeakError
    from fcreplay.version import __version__

COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("fcreplay.commands.check", "CI check: replay, schema diff, golden diff."),
    "contract": ("fcreplay.commands.contract", "Import a contract from another tool format."),
    "diff": ("fcreplay.commands.diff", "Compare the decisions of two runs (models, prompts)."),
    "golden": ("fcreplay.commands.golden", "Compare a run with the goldens, or update them."),
    "import": ("fcreplay.commands.import_", "Write a suite from a public benchmark (BFCL)."),
    "init": ("fcreplay.commands.init", "Write a small working suite to start from."),
    "inspect": ("fcreplay.commands.inspect", "Show the normalized decisions in any cassette."),
    "lint": ("fcreplay.commands.lint", "Check the contract, cases and tool results."),
    "merge": ("fcreplay.commands.merge", "Merge the run logs of a sharded check into one."),
    "proxy": ("fcreplay.commands.proxy", "Record and replay any client's traffic on loopback."),
    "record": ("fcreplay.commands.record", "Run the suite live and record cassettes."),
    "report": ("fcreplay.commands.report", "Metrics and error table of a run log."),
    "replay": ("fcreplay.commands.replay", "Replay the suite from cassettes, offline."),
    "schema-diff": ("fcreplay.commands.schema_diff", "Diff sent tool schemas with the contract."),
    "simulate": ("fcreplay.commands.simulate", "Serve the synthetic loopback provider simulator."),
}
"""name -> (module, one-line help); the help is here so `--help` imports no command."""

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2


class LazyGroup(click.Group):
    """A group whose commands are imported only when invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fcreplay")
def cli() -> None:
    """Record, replay and regression-test LLM function calling.

    One canonical tool contract, many provider wire formats. Offline and
    strict by default: recording and updating baselines are explicit.
    """


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the CLI and exit with 0 (clean), 1 (findings) or 2 (bad input or usage)."""
    with methodcache.kept():
        code = run(argv)
    collector.skip_final_collection()
    sys.exit(code)


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code instead of exiting."""
    try:
        result: Any = cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="fcreplay",
            standalone_mode=False,
        )
    except click.ClickException as exc:
        exc.show()
        return EXIT_INPUT if isinstance(exc, click.UsageError) else exc.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except InputError as exc:
        for problem in exc.problems:
            click.echo(str(problem), err=True)
        return EXIT_INPUT
    except SecretLeakError as exc:
        click.echo(f"fcreplay: refused: {exc}", err=True)
        return EXIT_FINDINGS
    except FcreplayError as exc:
        click.echo(f"fcreplay: error: {exc}", err=True)
        return EXIT_INPUT
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        return 130
    if isinstance(result, int) and not isinstance(result, bool):
        return result  # click.exceptions.Exit codes (--help, --version)
    return EXIT_FINDINGS if result is False else EXIT_OK
