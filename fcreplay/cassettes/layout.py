"""How fcreplay lays out a cassette's JSON text: one line per field, short leaf values on one.

Objects and arrays are indented by one space per level, one member per line, as
`json.dumps(indent=1)` writes them, except an object or array that holds only
numbers, strings, booleans and nulls and fits its line (`WIDTH` characters,
indentation and key included): it is written on that line, e.g.
`"required": ["order_id", "weight_kg"]`. A reviewer's diff still points at the
changed field, or at the one short line that holds it, and the file loses most of
the lines and indentation that such values took.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fcreplay.cassettes.shared import SHARED, Shared, share

WIDTH = 100
"""The longest line a leaf object or array is folded onto."""

_ONE_LINE = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
"""Non-ASCII kept readable; NaN and infinity refused (ValueError) as JSON cannot carry them."""
_encode = _ONE_LINE.encode


def layout(value: Any, depth: int = 0, prefix: int = 0) -> str:
    """`value` as JSON text that starts at indentation `depth`, after `prefix` characters
    (its key) on the first line; continuation lines carry their own indentation."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        if _leaf(value.values()):
            line = _encode(value)
            if depth + prefix + len(line) < WIDTH:
                return line
        pad = "\n" + " " * (depth + 1)
        members = []
        for key, member in value.items():
            name = _encode(key if isinstance(key, str) else str(key)) + ": "
            members.append(name + layout(member, depth + 1, len(name)))
        return "{" + pad + ("," + pad).join(members) + "\n" + " " * depth + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        if _leaf(value):
            line = _encode(value)
            if depth + prefix + len(line) < WIDTH:
                return line
        pad = "\n" + " " * (depth + 1)
        elements = [layout(element, depth + 1) for element in value]
        return "[" + pad + ("," + pad).join(elements) + "\n" + " " * depth + "]"
    return _encode(value)


def _leaf(members: Any) -> bool:
    return not any(isinstance(member, dict | list | tuple) for member in members)


# --- a cassette's text, interaction by interaction -------------------------------------


@dataclass(frozen=True)
class InteractionText:
    """One interaction as it stands in a cassette's text, and the shared values it refers to."""

    text: str
    """Laid out for its place (an element of `interactions`), references in its bodies."""
    shared: tuple[tuple[str, str, str], ...] = ()
    """(name, compact JSON, text laid out for its place in the `shared` block) of each."""


def interaction_text(item: dict[str, Any]) -> InteractionText:
    """Lay out one interaction (in fcreplay's layout, `interaction_json`) for a cassette.

    A recorder lays out each interaction once and reassembles the cassette from the
    texts after every attempt; the layout of each distinct shared value is kept too.
    """
    found: list[Shared] = []
    text = _ELEMENT_INDENT + layout(share(item, found), _ELEMENT_DEPTH)
    return InteractionText(text, tuple((s.name, s.compact, _shared_text(s)) for s in found))


def assemble(head: dict[str, Any], texts: Sequence[InteractionText]) -> str:
    """A whole cassette: `head` (its first members), the `shared` block of every value the
    interactions refer to (first use first), then the interactions.

    Raises ValueError if two different values would share a name (a hash collision).
    """
    shared: dict[str, tuple[str, str]] = {}
    for interaction in texts:
        for name, compact, text in interaction.shared:
            known = shared.setdefault(name, (compact, text))
            if known[0] != compact:
                raise ValueError(f"two different shared values hash to the name {name!r}")
    members = [_encode(key) + ": " + layout(value, 1, len(key) + 4) for key, value in head.items()]
    if shared:
        entries = (
            f"{_ELEMENT_INDENT}{_encode(name)}: {text}" for name, (_, text) in shared.items()
        )
        members.append(f'"{SHARED}": {{\n' + ",\n".join(entries) + "\n }")
    if texts:
        members.append('"interactions": [\n' + ",\n".join(t.text for t in texts) + "\n ]")
    else:
        members.append('"interactions": []')
    return "{\n " + ",\n ".join(members) + "\n}\n"


_ELEMENT_DEPTH = 2
"""An interaction, like a shared value, sits at depth 2: in the document, in its block."""
_ELEMENT_INDENT = " " * _ELEMENT_DEPTH
_SHARED_TEXTS: dict[str, str] = {}
"""Layouts of shared values by compact JSON: every request of a unit sends the same tools."""
_SHARED_TEXTS_KEPT = 64


def _shared_text(shared: Shared) -> str:
    text = _SHARED_TEXTS.get(shared.compact)
    if text is None:
        if len(_SHARED_TEXTS) >= _SHARED_TEXTS_KEPT:
            _SHARED_TEXTS.clear()
        text = layout(shared.value, _ELEMENT_DEPTH, len(shared.name) + 4)
        _SHARED_TEXTS[shared.compact] = text
    return text
