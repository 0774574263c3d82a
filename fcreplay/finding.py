"""Findings: one observed contract failure, with its code, location and values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from fcreplay.quickinit import quick
from fcreplay.structdiff import Difference

FindingCode = Literal[
    "wrong_tool",
    "unknown_tool",
    "invalid_json",
    "missing_required",
    "additional_property",
    "type_mismatch",
    "enum_mismatch",
    "pattern_mismatch",
    "out_of_range",
    "schema_violation",
    "argument_mismatch",
    "unexpected_call",
    "missing_call",
    "unsafe_call",
    "text_mismatch",
    "false_success",
    "repeated_failed_call",
    "step_limit",
    "request_drift",
    "broken_history",
    "tool_drift",
]

FINDING_CODES: tuple[FindingCode, ...] = FindingCode.__args__  # type: ignore[attr-defined]


@quick
@dataclass(frozen=True, slots=True)
class Finding:
    """One failure of a decision against the contract or the case's expectation."""

    code: FindingCode
    path: str
    """JSON pointer into the decision, e.g. `/calls/0/arguments/weight_kg`."""
    expected: Any
    actual: Any
    message: str
    step: int | None = None
    """The turn it was found at, when listed for a whole attempt."""
    changes: tuple[Difference, ...] | None = None
    """For `request_drift`: every difference between the recorded request and today's."""
    matcher: str | None = None
    """For `argument_mismatch` under a case's matcher or rule set: which one failed."""

    def to_json(self) -> dict[str, Any]:
        """Return the finding as a JSON-ready dict."""
        data = {
            "code": self.code,
            "path": self.path,
            "expected": self.expected,
            "actual": self.actual,
            "message": self.message,
        }
        if self.step is not None:
            data["step"] = self.step
        if self.changes is not None:
            data["changes"] = [change.to_json() for change in self.changes]
        if self.matcher is not None:
            data["matcher"] = self.matcher
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        """Rebuild a finding from `to_json` output."""
        return cls(
            code=data["code"],
            path=data["path"],
            expected=data.get("expected"),
            actual=data.get("actual"),
            message=data.get("message", ""),
            step=data.get("step"),
            changes=(
                None
                if data.get("changes") is None
                else tuple(Difference.from_json(change) for change in data["changes"])
            ),
            matcher=data.get("matcher"),
        )
