"""Exceptions for "fcreplay could not run"; findings are results, never exceptions.

* FcreplayError
  + InputError          a contract, case, config or cassette file is unusable (exit 2)
  + SecretLeakError     a cassette would still hold a credential; not written (exit 1)

The CLI maps each class to its exit code in one place (`fcreplay.cli.main`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input file, where it is and what to do."""

    file: Path | str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else f"{self.file}"
        return f"{where}: {self.message}"


class FcreplayError(Exception):
    """Base class: fcreplay could not do what was asked."""


class InputError(FcreplayError):
    """One or more input files are unusable; every problem found is listed."""

    def __init__(self, problems: list[Problem] | Problem) -> None:
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def __reduce__(self) -> tuple[type[InputError], tuple[list[Problem]]]:
        # Rebuilt from its problems, not its message, when it crosses a process.
        return (type(self), (self.problems,))

    @classmethod
    def at(cls, file: Path | str, line: int | None, message: str) -> InputError:
        """Build an error for a single problem."""
        return cls(Problem(file, line, message))


class SecretLeakError(FcreplayError):
    """A cassette, log or report would contain a credential, so it was not written."""
