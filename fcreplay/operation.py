"""What a completed operation cost: tokens, latency and money per attempt, not per request.

An attempt runs one case to its end: every turn, every retry after a rate limit or a
cut stream, every repair or clarification round. Comparing single requests hides
that one model needs three turns where another needs one, so the figures here are
per completed attempt (one that got a decision to judge, whatever its verdict), per
target × variant:

* tokens = input + output tokens summed over the attempt's turns (as each provider's
  adapter normalized them: cached input and reasoning output included), p50 and p95;
  an attempt with a turn whose provider reported no usage has no token figure;
* latency_ms = the providers' answer times summed over the turns and their retries,
  as measured when recording (a replay reports the recorded figures, never its own
  timing), p50 and p95;
* cost = tokens priced by the configured `prices` of the target's model (cached
  input at its own price when given), p50, p95 and total; None without a price;
* requests = HTTP requests per completed attempt (turns plus retries), on average;
* transport_error_rate = attempts that got no decision / attempts.

Percentiles are nearest-rank: p95 of twenty attempts is the 19th smallest.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fcreplay.inputs.prices import Price
from fcreplay.quickinit import quick
from fcreplay.record import AttemptRecord

FIGURES = ("tokens", "latency_ms", "cost")
"""The per-attempt figures reported as p50 and p95."""


@quick
@dataclass(frozen=True)
class AttemptCost:
    """What one attempt spent."""

    completed: bool
    tokens: int | None
    input_tokens: int | None
    output_tokens: int | None
    latency_ms: int | None
    requests: int
    cost: float | None


def attempt_cost(record: AttemptRecord, price: Price | None) -> AttemptCost:
    """Sum one attempt's turns (see the module docstring)."""
    steps = record.steps
    # One pass over the turns: every completed attempt of a run is summed.
    known = bool(steps)
    latency: int | None = 0 if steps else None
    inputs = outputs = cached = retries = 0
    for step in steps:
        usage = step.decision.usage
        if usage is None:
            known = False
        else:
            if usage.input_tokens is None:
                known = False
            inputs += usage.input_tokens or 0
            outputs += usage.output_tokens or 0
            cached += usage.cached_tokens or 0
        if latency is not None:
            latency = None if step.latency_ms is None else latency + step.latency_ms
        retries += step.retries
    cost = None
    if known and price is not None:
        cached_price = price.cached_input_per_mtok
        if cached_price is None:
            cached_price = price.input_per_mtok
        cost = (
            (inputs - cached) * price.input_per_mtok
            + cached * cached_price
            + outputs * price.output_per_mtok
        ) / 1_000_000
    return AttemptCost(
        completed=record.transport_error is None and bool(steps),
        tokens=inputs + outputs if known else None,
        input_tokens=inputs if known else None,
        output_tokens=outputs if known else None,
        latency_ms=latency,
        requests=len(steps) + retries,
        cost=cost,
    )


@dataclass
class OperationTally:
    """The costs of one target × variant's attempts."""

    attempted: int = 0
    errors: int = 0
    completed: list[AttemptCost] = field(default_factory=list)

    def merge(self, other: OperationTally) -> None:
        """Add `other`'s attempts: the same target × variant, later records."""
        self.attempted += other.attempted
        self.errors += other.errors
        self.completed += other.completed

    def figures(self) -> dict[str, Any]:
        """The JSON-ready figures (see the module docstring)."""
        done = self.completed
        result: dict[str, Any] = {
            "completed": len(done),
            "transport_error_rate": _rate(self.errors, self.attempted),
            "requests_per_completed": round(sum(c.requests for c in done) / len(done), 2)
            if done
            else None,
        }
        for name in FIGURES:
            values = [getattr(c, name) for c in done if getattr(c, name) is not None]
            result[f"{name}_p50"] = percentile(values, 50)
            result[f"{name}_p95"] = percentile(values, 95)
        costs = [c.cost for c in done if c.cost is not None]
        result["cost_total"] = round(sum(costs), 6) if costs else None
        return result


def operation_figures(
    records: Iterable[AttemptRecord], prices: Mapping[str, Price] | None = None
) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (target, variant), in first-seen order: the figures of its completed attempts."""
    return {key: tally.figures() for key, tally in operation_tallies(records, prices).items()}


def operation_tallies(
    records: Iterable[AttemptRecord], prices: Mapping[str, Price] | None = None
) -> dict[tuple[str, str], OperationTally]:
    """Per (target, variant), in first-seen order: what its attempts spent."""
    tallies: dict[tuple[str, str], OperationTally] = {}
    for record in records:
        tally = tallies.setdefault((record.target, record.variant), OperationTally())
        tally.attempted += 1
        spent = attempt_cost(record, (prices or {}).get(record.model))
        if spent.completed:
            tally.completed.append(spent)
        elif record.transport_error is not None:
            tally.errors += 1
    return tallies


def percentile(values: list[Any], rank: int) -> Any:
    """The nearest-rank percentile of `values`; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    index = max(0, math.ceil(rank / 100 * len(ordered)) - 1)
    value = ordered[index]
    return round(value, 6) if isinstance(value, float) else value


def _rate(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else round(numerator / denominator, 4)
