"""Structural differences between two JSON values, through deepdiff.

The only module that imports deepdiff. Callers compare canonically first and
come here only for values that differ, because deepdiff is slow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fcreplay.sources import pointer
from fcreplay.strictjson import exact_json


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
    found: list[Difference] = []
    _walk(before, after, (), found)
    return sorted(found, key=lambda d: d.path)


def _walk(before: Any, after: Any, at: tuple[Any, ...], found: list[Difference]) -> None:
    """Descend where deepdiff would, skipping equal parts, and leave the rest to it.

    deepdiff walks every node of both values, equal or not, and builds objects for
    each: a drifted request whose twenty tool declarations did not change took 80 ms.
    Equal parts are skipped here by their exact bytes, and dicts and lists of
    containers are descended the way deepdiff pairs them (keys by name, items by
    index), so what remains and the paths found are deepdiff's own.
    """
    if _identical(before, after):
        return
    if type(before) is dict and type(after) is dict:
        for key in before.keys() | after.keys():
            left, right = before.get(key, MISSING), after.get(key, MISSING)
            if left is MISSING or right is MISSING:
                found.append(Difference(pointer(*at, key), left, right))
            else:
                _walk(left, right, (*at, key), found)
    elif type(before) is list and type(after) is list and _paired_by_index(before, after):
        for index in range(max(len(before), len(after))):
            left = before[index] if index < len(before) else MISSING
            right = after[index] if index < len(after) else MISSING
            if left is MISSING or right is MISSING:
                found.append(Difference(pointer(*at, index), left, right))
            else:
                _walk(left, right, (*at, index), found)
    else:
        found += _leaf(before, after, at)


_PLAIN = (str, int, float, bool, type(None))
_JSON_TYPES = frozenset({dict, list, *_PLAIN})


def _leaf(before: Any, after: Any, at: tuple[Any, ...]) -> list[Difference]:
    """What deepdiff reports for two values `_walk` does not descend, without it where
    the answer is plain (importing deepdiff alone takes about 60 ms).

    deepdiff reports a change of type, or two different plain values of one type, as one
    difference at the place; a plain list that only grew or shrank at its end it aligns
    (difflib: the equal prefix, then the items added or removed). Anything else is its own.
    """
    kind = type(before)
    if kind not in _JSON_TYPES or type(after) not in _JSON_TYPES:
        return _deepdiff(before, after, at)
    if kind is not type(after):
        return [] if _same_number(before, after) else [Difference(pointer(*at), before, after)]
    if kind is list:
        return _grown_or_shrunk(before, after, at)
    return [] if before == after else [Difference(pointer(*at), before, after)]


def _grown_or_shrunk(before: list[Any], after: list[Any], at: tuple[Any, ...]) -> list[Difference]:
    shorter, longer = (before, after) if len(before) < len(after) else (after, before)
    # Items of one type and equal are equal to difflib too; with the whole shorter list as
    # the longest match, difflib starts it at 0 on both sides and leaves only the tail.
    if len(shorter) == len(longer) or not all(
        type(left) is type(right) and left == right
        for left, right in zip(shorter, longer, strict=False)
    ):
        return _deepdiff(before, after, at)
    start = len(shorter)
    if longer is after:
        return [Difference(pointer(*at, i), MISSING, after[i]) for i in range(start, len(after))]
    return [Difference(pointer(*at, i), before[i], MISSING) for i in range(start, len(before))]


def _identical(before: Any, after: Any) -> bool:
    if before is after:
        return True
    if type(before) is not type(after) or before != after:
        return False
    # == holds for true and 1, and for 1 and 1.0, deep inside; equal bytes tell them apart.
    # NaN is never == itself, so the bytes' one blind spot (NaN written as null) is closed.
    exact = exact_json(before)
    return exact is not None and exact == exact_json(after)


def _paired_by_index(before: list[Any], after: list[Any]) -> bool:
    """Whether deepdiff compares these lists item by item at the same index.

    It does unless every item on both sides is a plain value: lists of those it
    aligns by their longest common run (difflib) instead.
    """
    return not (
        all(isinstance(item, _PLAIN) for item in before)
        and all(isinstance(item, _PLAIN) for item in after)
    )


def _deepdiff(before: Any, after: Any, at: tuple[Any, ...]) -> list[Difference]:
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
            found.append(Difference(pointer(*at, *level.path(output_format="list")), left, right))
    return found


def _same_number(left: Any, right: Any) -> bool:
    numbers = (int, float)
    return (
        isinstance(left, numbers)
        and isinstance(right, numbers)
        and not isinstance(left, bool)
        and not isinstance(right, bool)
        and left == right
    )
