"""Options and output shared by `record` and `replay`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

if TYPE_CHECKING:
    from fcreplay.engine.runner import RunResult
    from fcreplay.record import AttemptRecord


class Replayed(Protocol):
    """A replay's attempts that could not be replayed faithfully, and its log."""

    @property
    def problems(self) -> Sequence[AttemptRecord]: ...

    @property
    def log_path(self) -> Path: ...


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
    if result.requests:
        lines.append(
            f"  requests: {result.requests.get('live', 0)} sent live, "
            f"{result.requests.get('replayed', 0)} answered from cassettes"
        )
    lines.append(f"run log: {result.log_path}")
    return lines


def problem_lines(result: Replayed, limit: int = 20) -> list[str]:
    """The units that could not be replayed faithfully, one line each (first `limit`),
    the drift of the first unit of each kind shown change by change, and how many more."""
    units: dict[str, list[AttemptRecord]] = {}
    for record in result.problems:
        units.setdefault(record.unit, []).append(record)
    lines: list[str] = []
    if not units:
        return lines  # without loading how drift is told (the replay machinery)
    from fcreplay.engine.drift import drift_summary
    from fcreplay.render.drift import show_change

    explained: set[tuple[str | None, ...]] = set()
    for unit, records in list(units.items())[:limit]:
        first = records[0]
        count = f" ({len(records)} attempts)" if len(records) > 1 else ""
        drift = first.drift
        changes = drift.changes or () if drift is not None else ()
        kind = tuple(change.label or change.path for change in changes)
        if changes and kind in explained:
            # The same change as a unit above: say what, not again how.
            lines.append(f"drift: {unit}{count}: {drift_summary(changes)} changed, as above")
            continue
        lines.append(f"drift: {unit}{count}: {first.problem}")
        if changes:
            explained.add(kind)
            for change in changes[:3]:
                lines += [f"    {line}" for line in show_change(change)]
            if len(changes) > 3:
                lines.append(f"    … and {len(changes) - 3} more changes")
    if len(units) > limit:
        rest = list(units)[limit]
        target, variant, case = rest.split("/", 2)
        lines.append(
            f"… and {len(units) - limit} more units (see {result.log_path} or "
            f"`fcreplay replay --target {target} --variant {variant} --case {case}`)"
        )
    return lines


def error_lines(result: RunResult) -> list[str]:
    """The distinct reasons attempts got no answer, with counts, most frequent first."""
    from collections import Counter

    reasons: Counter[str] = Counter()
    for record in result.errors:
        error = record.transport_error
        assert error is not None
        hint = ""
        if error.type == "connection":
            hint = " — is the provider or `fcreplay simulate` running?"
        reasons[error.message + hint] += 1
    total = sum(reasons.values())
    if not total:
        return []
    noun = "attempt" if total == 1 else "attempts"
    if len(reasons) == 1:
        return [f"{total} {noun} failed: {next(iter(reasons))}"]
    lines = [f"{total} {noun} failed:"]
    lines += [f"  {count} × {reason}" for reason, count in reasons.most_common()]
    return lines
