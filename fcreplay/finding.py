"""Findings: one observed contract failure, with its code, location and values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

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
]

FINDING_CODES: tuple[FindingCode, ...] = FindingCode.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Finding:
    """One failure of a decision against the contract or the case's expectation."""

    code: FindingCode
    path: str
    """JSON pointer into the decision, e.g. `/calls/0/arguments/weight_kg`."""
    expected: Any
    actual: Any
    message: str

    def to_json(self) -> dict[str, Any]:
        """Return the finding as a JSON-ready dict."""
        return {
            "code": self.code,
            "path": self.path,
            "expected": self.expected,
            "actual": self.actual,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        """Rebuild a finding from `to_json` output."""
        return cls(
            code=data["code"],
            path=data["path"],
            expected=data.get("expected"),
            actual=data.get("actual"),
            message=data.get("message", ""),
        )
