"""The bounds fcreplay reads and records within: nesting depth, sizes, ratios and deadlines.

Every file fcreplay reads comes from a pull request and every live answer from a
server it does not control, so each reader stops at a documented bound instead of
running out of memory, stack or time. The values are configurable per suite (keys of
the same names; see docs/reliability.md); `DEFAULT_LIMITS` is used where no suite
configuration is in play (`fcreplay inspect`, model output).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one suite allows a file, a body or a live request to grow to."""

    max_json_depth: int = 64
    """Nesting of arrays and objects in any JSON or YAML value read (files, bodies,
    argument strings); deeper input is an input error, not a RecursionError."""
    max_cassette_bytes: int = 64 * MIB
    """Size of one cassette file on disk."""
    max_body_bytes: int = 32 * MIB
    """Size of one recorded body once decoded (gzip, deflate, base64)."""
    max_decompression_ratio: int = 200
    """Decoded size over encoded size for a compressed body larger than 1 MiB decoded."""
    max_yaml_alias_nodes: int = 10_000
    """Nodes that YAML aliases may add to a cassette when expanded (alias bombs)."""
    max_response_bytes: int = 32 * MIB
    """Size of one live answer while recording; a longer one is cut as a transport error."""
    request_deadline: float = 300.0
    """Seconds one live request may take in all, however steadily the server trickles."""


DEFAULT_LIMITS = Limits()

LIMIT_KEYS = tuple(Limits.__dataclass_fields__)
"""Configuration keys that set a limit, in declaration order."""


def limit_value(key: str, value: Any) -> int | float:
    """Check one configured limit: a positive whole number, or positive finite seconds."""
    if key == "request_deadline":
        return positive_seconds(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError("must be a whole number of at least 1")
    if key == "max_json_depth" and value > MAX_JSON_DEPTH:
        # Deeper values would reach Python's own recursion limit in the readers.
        raise ValueError(f"must be at most {MAX_JSON_DEPTH}")
    return value


MAX_JSON_DEPTH = 200
"""The highest `max_json_depth` a suite may set."""


def positive_seconds(value: Any) -> float:
    """A duration from configuration: finite and greater than zero."""
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError("must be a finite number of seconds greater than 0")
    return float(value)
