"""Options and output shared by `record` and `replay`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from fcreplay.engine.runner import RunResult

F = TypeVar("F", bound=Callable[..., Any])


def selection_options(function: F) -> F:
    """Add --target/--case/--variant (each repeatable) and --concurrency."""
    for option in reversed(
        [
            click.option(
                "--target",
                "targets",
                multiple=True,
                metavar="NAME",
                help="Only this target (repeatable; default: all configured).",
            ),
            click.option(
                "--case",
                "case_ids",
                multiple=True,
                metavar="ID",
                help="Only this case (repeatable; default: all cases).",
            ),
            click.option(
                "--variant",
                "variants",
                multiple=True,
                type=click.Choice(["auto", "forced", "no_tools", "reversed"]),
                help="Only this variant (repeatable; default: the configured ones).",
            ),
            click.option(
                "--concurrency",
                default=1,
                show_default=True,
                type=click.IntRange(1, 64),
                help="Units (cassettes) run at the same time.",
            ),
        ]
    ):
        function = option(function)
    return function


def summarize(result: RunResult) -> list[str]:
    """Per target × variant: attempts, passed, with findings, errors; then the log path."""
    from collections import Counter

    counts: dict[tuple[str, str], Counter[str]] = {}
    for record in result.records:
        key = (record.target, record.variant)
        counts.setdefault(key, Counter())[record.verdict] += 1
    lines = []
    width = max((len(f"{t}/{v}") for t, v in counts), default=10)
    for (target, variant), counter in counts.items():
        total = sum(counter.values())
        lines.append(
            f"  {f'{target}/{variant}':<{width}}  {total:4d} attempts  {counter['pass']:4d} pass"
            f"  {counter['fail']:4d} with findings  {counter['error']:3d} errors"
        )
    if result.skipped:
        lines.append(f"  {result.skipped} attempts were already logged and were skipped")
    lines.append(f"run log: {result.log_path}")
    return lines
