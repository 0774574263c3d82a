"""Argument classes raw_valid / repairable / invalid, under a versioned repair policy."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Literal

from fcreplay.decision import ToolCall
from fcreplay.inputs.contract import Contract
from fcreplay.quickinit import quick
from fcreplay.sources import pointer

REPAIR_POLICY = "v1"
"""v1: a numeric string becomes a number where the schema wants a number or an
integer ("12" -> 12, "2.5" -> 2.5, comma decimal "2,5" -> 2.5). Nothing else."""

ArgumentStatus = Literal["raw_valid", "repairable", "invalid"]
_NUMBER = re.compile(r"^-?\d+(?:[.,]\d+)?$")


@dataclass(frozen=True, slots=True)
class Repair:
    """One value the policy changed."""

    path: str
    before: Any
    after: Any


@quick
@dataclass(frozen=True, slots=True)
class ArgumentClassification:
    """How a call's arguments stand against its tool's schema, before and after repair."""

    status: ArgumentStatus
    before: Any
    """The arguments as the model sent them (the raw string when not JSON)."""
    after: dict[str, Any] | None = None
    """The repaired arguments, when status is repairable."""
    repairs: tuple[Repair, ...] = ()
    policy: str = REPAIR_POLICY

    def to_json(self) -> dict[str, Any]:
        """Return the check as a JSON-ready dict."""
        return {
            "status": self.status,
            "policy": self.policy,
            "before": self.before,
            "after": self.after,
            "repairs": [
                {"path": r.path, "before": r.before, "after": r.after} for r in self.repairs
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ArgumentClassification:
        """Rebuild a check from `to_json` output."""
        status = data["status"]
        if status not in ("raw_valid", "repairable", "invalid"):
            raise ValueError(f"argument status {status!r}")
        return cls(
            status=status,
            before=data["before"],
            after=data["after"],
            repairs=tuple(Repair(r["path"], r["before"], r["after"]) for r in data["repairs"]),
            policy=data["policy"],
        )


def classify_arguments(call: ToolCall, contract: Contract) -> ArgumentClassification:
    """Classify a call's arguments; malformed JSON is invalid and never repaired."""
    if call.arguments is None or contract.get(call.name) is None:
        return ArgumentClassification("invalid", call.raw_arguments)
    validator = contract.validator(call.name)
    violations = validator.violations(call.arguments)
    if not violations:
        return ArgumentClassification("raw_valid", call.arguments)
    repaired = copy.deepcopy(call.arguments)
    repairs: list[Repair] = []
    for violation in violations:
        wanted = violation.schema_value
        wanted_types = wanted if isinstance(wanted, list) else [wanted]
        if (
            violation.keyword != "type"
            or not {"number", "integer"} & set(wanted_types)
            or not isinstance(violation.instance, str)
            or not _NUMBER.match(violation.instance)
            or not violation.path
        ):
            continue
        text = violation.instance.replace(",", ".")
        value: int | float = float(text) if "." in text else int(text)
        parent: Any = repaired
        for part in violation.path[:-1]:
            parent = parent[part]
        parent[violation.path[-1]] = value
        repairs.append(Repair(pointer(*violation.path), violation.instance, value))
    if repairs and validator.is_valid(repaired):
        return ArgumentClassification("repairable", call.arguments, repaired, tuple(repairs))
    return ArgumentClassification("invalid", call.arguments)
