"""Request drift for people: each change labelled, strings shown where they first differ.

Two long strings that differ in one word are cut around that word with the same
context on both sides (as pytest and difflib show them), so the edit is visible;
a tool-order change lists the moves.
"""

from __future__ import annotations

import json
from typing import Any

from fcreplay.structdiff import MISSING, Difference

CONTEXT = 30
"""Characters of shared text shown before and after the differing part."""
WIDTH = 100
"""Most characters of a value shown on one line."""


def show_change(change: Difference) -> list[str]:
    """One change as lines: what it is, then the recorded and the current value."""
    label = change.label or (change.path or "/")
    if change.label and change.path.startswith("(tool ") and "/parameters/" in change.path:
        label += " at " + change.path[change.path.index("/parameters/") + len("/parameters") :]
    if change.label in ("tool order", "tool list") and isinstance(change.before, list):
        return [f"{label}: {_tool_lists(change.before, change.after)}"]
    before, after = change.before, change.after
    if isinstance(before, str) and isinstance(after, str):
        at, old, new = _around(before, after)
        line, column = _position(before, at)
        where = f" at character {at + 1} (line {line}, column {column})" if at else ""
        return [f"{label} differs{where}:", f"  recorded: {old}", f"  now:      {new}"]
    return [f"{label}: recorded {_value(before)}, now {_value(after)}"]


def _tool_lists(before: list[Any], after: Any) -> str:
    shown = f"recorded {', '.join(map(str, before))}; now {', '.join(map(str, after))}"
    if sorted(before) != sorted(after):
        return shown
    moves = [
        f"{name} {before.index(name) + 1}→{after.index(name) + 1}"
        for name in before
        if before.index(name) != after.index(name)
    ]
    return f"{shown} (moves: {', '.join(moves)})"


def _around(before: str, after: str) -> tuple[int, str, str]:
    """The first differing position and both strings cut to show it with context."""
    prefix = 0
    limit = min(len(before), len(after))
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and before[len(before) - 1 - suffix] == after[len(after) - 1 - suffix]
    ):
        suffix += 1
    start = max(0, prefix - CONTEXT)

    def cut(text: str) -> str:
        middle_end = len(text) - suffix
        end = min(len(text), middle_end + CONTEXT)
        middle = text[prefix:middle_end]
        if len(middle) > WIDTH:
            middle = middle[: WIDTH // 2] + "…" + middle[-WIDTH // 4 :]
        shown = text[start:prefix] + middle + text[middle_end:end]
        return (
            ("…" if start else "")
            + json.dumps(shown, ensure_ascii=False)
            + ("…" if end < len(text) else "")
        )

    return prefix, cut(before), cut(after)


def _position(text: str, at: int) -> tuple[int, int]:
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def _value(value: Any) -> str:
    if value is MISSING:
        return "(missing)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"
