"""The price table of a suite: what each model's tokens cost, read from `[prices]`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Price:
    """What one model's tokens cost, in the currency of your choice per million tokens."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    """Cached input tokens; None: priced as other input tokens."""


_PRICE_KEYS = ("input_per_mtok", "output_per_mtok", "cached_input_per_mtok")


def parse_prices(value: Any) -> tuple[tuple[str, Price], ...]:
    """The `prices` table as (model id, Price) pairs; ValueError says what is wrong."""
    if not isinstance(value, dict):
        raise ValueError(
            "must be a table: model id = {input_per_mtok = ..., output_per_mtok = ...}"
        )
    prices = []
    for model, entry in value.items():
        if not isinstance(entry, dict) or not {"input_per_mtok", "output_per_mtok"} <= set(entry):
            raise ValueError(f"{model!r}: needs input_per_mtok and output_per_mtok")
        unknown = sorted(set(entry) - set(_PRICE_KEYS))
        if unknown:
            raise ValueError(
                f"{model!r}: unknown key {unknown[0]!r} (known: {', '.join(_PRICE_KEYS)})"
            )
        if not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            for v in entry.values()
        ):
            raise ValueError(f"{model!r}: prices must be numbers of at least 0")
        prices.append((str(model), Price(**{k: float(v) for k, v in entry.items()})))
    return tuple(prices)
