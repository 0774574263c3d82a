"""Structural differences between two JSON values, through deepdiff.

The only module that imports deepdiff. Callers compare canonically first and
come here only for values that differ, because deepdiff is slow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fcreplay.sources import pointer


class _Missing:
    """The type of MISSING: one instance, which pickles as itself (worker processes)."""

    def __repr__(self) -> str:
        return "(missing)"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""Stands for a key or item present on one side only."""


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where two JSON values differ."""

    path: str
    """JSON pointer to the place, e.g. `/tools/1/function/parameters/required`."""
    before: Any
    """The value on the left (recorded, contract, golden); MISSING when absent."""
    after: Any
    """The value on the right (now, sent, new run); MISSING when absent."""
    label: str | None = None
    """What the place is, in words ("system prompt", "tool order"), when known."""

    def to_json(self) -> dict[str, Any]:
        """The difference with MISSING written as null plus a flag."""
        return {
            "path": self.path,
            "before": None if self.before is MISSING else self.before,
            "after": None if self.after is MISSING else self.after,
            **({"before_missing": True} if self.before is MISSING else {}),
            **({"after_missing": True} if self.after is MISSING else {}),
            **({"label": self.label} if self.label is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Difference:
        """Rebuild a difference from `to_json` output, MISSING included."""
        return cls(
            path=data["path"],
            before=MISSING if data.get("before_missing") else data.get("before"),
            after=MISSING if data.get("after_missing") else data.get("after"),
            label=data.get("label"),
        )


def differences(before: Any, after: Any) -> list[Difference]:
    """Every leaf-level difference, sorted by path; [] when the values are equal."""
    from deepdiff import DeepDiff
    from deepdiff.helper import notpresent

    # threshold_to_diff_deeper=0: always descend, so every difference is a leaf, even
    # where most keys of a dict changed (deepdiff would report the whole dict).
    tree = DeepDiff(
        before,
        after,
        view="tree",
        threshold_to_diff_deeper=0,
    )
    found: list[Difference] = []
    for levels in tree.values():
        for level in levels:
            left = MISSING if level.t1 is notpresent else level.t1
            right = MISSING if level.t2 is notpresent else level.t2
            if _same_number(left, right):
                continue  # 1 and 1.0 are one JSON value; true and 1 are not
            found.append(Difference(pointer(*level.path(output_format="list")), left, right))
    return sorted(found, key=lambda d: d.path)


def _same_number(left: Any, right: Any) -> bool:
    numbers = (int, float)
    return (
        isinstance(left, numbers)
        and isinstance(right, numbers)
        and not isinstance(left, bool)
        and not isinstance(right, bool)
        and left == right
    )
