"""JSON data copied: objects and arrays made anew, everything immutable kept."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

_V = TypeVar("_V")


def copied(value: _V) -> _V:
    """`copy.deepcopy` for JSON data, about 2.5 times faster: objects and arrays are made
    anew, strings, numbers, booleans and null are immutable and kept; anything else
    goes to `copy.deepcopy`. Adapters copy every parsed turn they keep or change.

    Unlike `deepcopy` it keeps no memo: a member held twice (an interned value) is
    copied twice, which gives equal values that no longer share, and JSON has no cycles.
    """
    made: _V = _copied(value)
    return made


def _copied(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is dict:
        return {key: _copied(member) for key, member in value.items()}
    if kind is list:
        return [_copied(member) for member in value]
    return copy.deepcopy(value)
