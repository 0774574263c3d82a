"""One place where a call's arguments differ from the expected ones, under whichever rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ArgumentMismatch:
    """One place where the arguments differ from what the case expects."""

    pointer: str
    """Into the arguments, e.g. `/title`; "" for the whole object."""
    expected: Any
    actual: Any
    message: str
    matcher: str | None = None
    """The matcher or rule set that failed; None for an exact comparison."""
