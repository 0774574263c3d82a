"""Helpers shared by the adapters: argument decoding, error classes, stop mapping."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..canonical import canonical_json
from ..decision import Stop

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""Statuses the official SDKs retry (plus Anthropic's 529 overloaded)."""


def decode_arguments(raw: Any) -> dict[str, Any] | None:
    """Decode call arguments as sent: a JSON string, an object, or nothing.

    Returns None when they are not a JSON object; the raw value is kept by the
    caller and never repaired. Empty or absent arguments mean a no-argument call.
    """
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    return None


def encode_arguments(arguments: Mapping[str, Any]) -> str:
    """Encode arguments as the compact JSON string OpenAI-style APIs send."""
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def map_stop(table: Mapping[str, Stop], finish_reason: str | None, default: Stop) -> Stop:
    """Map a provider stop value through `table`; unknown values become "other"."""
    if finish_reason is None:
        return default
    return table.get(finish_reason, "other")


def result_text(content: Mapping[str, Any]) -> str:
    """A tool result as the JSON text sent to providers that take strings."""
    return canonical_json(dict(content))


def is_retryable(status: int) -> bool:
    """Whether a status is worth retrying at all (quota exhaustion is decided by body)."""
    return status in RETRYABLE_STATUS or status >= 500
