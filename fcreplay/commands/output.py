"""What commands print or write for people: every text passes the secret guard first."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from fcreplay.cassettes.redaction import SecretGuard
from fcreplay.errors import InputError

if TYPE_CHECKING:
    from fcreplay.inputs.config import SuiteConfig


def guard_of(config_path: str | None) -> SecretGuard:
    """The guard of the suite's credentials; key shapes only when there is no suite."""
    from fcreplay.inputs.config import load_config

    try:
        return SecretGuard(load_config(config_path).secret_values())
    except InputError:
        if config_path is not None:
            raise
        return SecretGuard()  # e.g. `report path/to/run.jsonl` outside any suite


def suite_guard(config: SuiteConfig) -> SecretGuard:
    """The guard of a loaded suite's credentials (its configuration is not read again)."""
    return SecretGuard(config.secret_values())


def echo(guard: SecretGuard, text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print `text` unless it holds a credential (SecretLeakError names the terminal)."""
    guard.check(text, where="the terminal output")
    click.echo(text, err=err, nl=nl)


def write_output(guard: SecretGuard, path: str, text: str) -> None:
    """Write a report file atomically unless it holds a credential; an unusable path
    (under a file, in a missing folder it cannot create) is an input error."""
    from fcreplay.atomic import write_text_atomically

    guard.check(text, where=path)
    try:
        write_text_atomically(path, text)
    except OSError as exc:
        raise InputError.at(
            path, None, f"cannot write the output: {exc.strerror or exc}; choose another --output"
        ) from None
