"""Canonical JSON: sorted keys, no insignificant whitespace, UTF-8, values unchanged."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def normalize(value: Any) -> Any:
    """Return `value` with integral floats as ints, the one JSON-level equivalence.

    JSON has a single number type, so `2.0` and `2` are the same value, while
    `2.5` and `"2.5"`, or `true` and `1`, stay different.
    """
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value  # most values, answered first
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: normalize(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(item) for item in value]
    return value


_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
_SORTED = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""Made once: `json.dumps` with options builds an encoder on every call."""


def canonical_json(value: Any) -> str:
    """Serialize `value` so that equal JSON values give equal strings."""
    return _CANONICAL.encode(normalize(value))


def canonical_hash(value: Any) -> str:
    """Return the sha256 hex digest of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def same_value(left: Any, right: Any) -> bool:
    """Compare two JSON values canonically: key order is irrelevant, types are not.

    Python's `==` already ignores key order but confuses `true` with `1`; a plain
    sorted dump tells those apart but not `1.0` from `1`. Both are C-speed, so the
    slow canonical form is built only when they disagree.
    """
    if type(left) is str and type(right) is str:
        return left == right  # the common case (an argument against a rule's string)
    if left != right:
        return False
    if sorted_json(left) == sorted_json(right):
        return True
    return canonical_json(left) == canonical_json(right)


def sorted_json(value: Any) -> str:
    """Compact JSON with sorted keys, at C speed; unlike `canonical_json` it keeps
    `1.0` and `1` apart, so equal texts mean equal values but not the reverse."""
    return _SORTED.encode(value)
