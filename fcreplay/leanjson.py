"""Large JSON documents read whole (golden files) at a peak of about their value's size."""

from __future__ import annotations

import json
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.limits import DEFAULT_LIMITS

_LEAN_BYTES = 1 << 20
"""Below, orjson's model of the document is small: `strictjson.loads` as usual."""


class _Refused(Exception):
    """A literal or number JSON has no finite value for."""


def loads_lean(text: str, *, max_depth: int = DEFAULT_LIMITS.max_json_depth) -> Any:
    """`strictjson.loads` of a document read whole, at a peak of about its value's size:
    orjson builds a model of the whole document first, about twelve times the text
    (44 MiB for a 3 MiB golden file), where Python's parser, as quick on such text,
    builds the value only. What this refuses, `strictjson.loads` refuses in its words."""
    if len(text) < _LEAN_BYTES:
        return strictjson.loads(text.encode(), max_depth=max_depth)
    try:
        value = json.loads(text, parse_constant=_refused, parse_float=_finite)
        deep = strictjson.nested_past(value, max_depth)
    except (_Refused, ValueError, RecursionError, TypeError):
        deep = True  # worded by `strictjson.loads`, or a number orjson cannot write
    return strictjson.loads(text.encode(), max_depth=max_depth) if deep else value


def _refused(literal: str) -> float:
    raise _Refused(literal)


def _finite(literal: str) -> float:
    value = float(literal)
    if value - value != 0:
        raise _Refused(literal)
    return value
