"""How the run report's figures read in every format: metric titles, rates and the notes."""

from __future__ import annotations

from typing import Any

HEADERS = {
    "decision_accuracy": "decision",
    "tool_selection_accuracy": "tool sel.",
    "raw_schema_validity": "raw schema",
    "exact_argument_accuracy": "exact args",
    "unsafe_call_rate": "unsafe",
    "error_recovery_accuracy": "recovery",
    "consistency": "consistent",
}
"""Short column titles of the metrics in tables."""


def rate(value: float | None) -> str:
    """A metric as shown in tables: a percentage with one decimal, or a dash for null."""
    return "—" if value is None else f"{value * 100:.1f}%"


def notes(report: dict[str, Any]) -> list[str]:
    """What a reader must know to read the figures right."""
    lines = []
    errors = sum(r["transport_errors"] for r in report["results"])
    if errors:
        lines.append(
            f"{_attempts(errors)} ended in a transport or provider error; they are counted "
            "apart and left out of every denominator"
        )
    drift = sum(r["request_drift"] for r in report["results"])
    if drift:
        lines.append(f"{_attempts(drift)} drifted from their cassette (request_drift)")
    for result in report["results"]:
        if result["normalizer_bugs"]:
            lines.append(
                f"normalizer bug: {_attempts(result['normalizer_bugs'])} of "
                f"{result['target']}/no_tools parsed a tool call although no tool was declared"
            )
    sensitivity = report["positional_sensitivity"]
    if any(value is not None for value in sensitivity.values()):
        shown = ", ".join(f"{t} {rate(v)}" for t, v in sensitivity.items())
        lines.append(f"positional sensitivity (auto vs reversed): {shown}")
    lines.append("— : no denominator (nothing to measure); forced is never mixed with auto")
    return lines


def _attempts(count: int) -> str:
    return f"{count} attempt" + ("" if count == 1 else "s")
