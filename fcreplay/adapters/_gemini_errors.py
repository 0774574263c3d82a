"""Gemini `google.rpc.Status` error envelopes read into ProviderErrors."""

from __future__ import annotations

import re
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.adapters._wire import as_list, is_retryable
from fcreplay.decision import ProviderError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)s\s*$")


def read_error(status: int, body: Any) -> ProviderError:
    """Read a `google.rpc.Status` envelope, tolerating strings, arrays and flat shapes."""
    error: Any = body
    if isinstance(error, bytes | str):
        try:
            error = strictjson.loads(error)
        except ValueError:
            text = error.decode("utf-8", "replace") if isinstance(error, bytes) else error
            error = text.strip()
    if isinstance(error, list):
        error = next((item for item in error if isinstance(item, dict)), None)
    if isinstance(error, dict) and "error" in error:
        error = error["error"]
    if not isinstance(error, dict):
        said = str(error) if error not in (None, "") else f"HTTP {status}"
        return ProviderError(status, None, None, said, is_retryable(status), raw=body)
    code = error.get("code")
    if 200 <= status < 300 and type(code) is int and 400 <= code < 600:
        status = code  # an error envelope inside a 200 stream carries the real status
    name = error.get("status")
    canonical: str | None = (
        name if isinstance(name, str) else code if isinstance(code, str) else None
    )
    message = error.get("message")
    details = [detail for detail in as_list(error.get("details")) if isinstance(detail, dict)]
    reasons = (detail["reason"] for detail in details if isinstance(detail.get("reason"), str))
    delays = (_seconds(detail.get("retryDelay")) for detail in details)
    per_day = any(
        "PerDay" in str(violation.get("quotaId", ""))
        for detail in details
        for violation in as_list(detail.get("violations"))
        if isinstance(violation, dict)
    )
    return ProviderError(
        status=status,
        type=canonical,
        code=next(reasons, None),
        message=message if isinstance(message, str) else f"HTTP {status}",
        # A per-day quota will not come back in seconds, whatever RetryInfo says.
        retryable=is_retryable(status) and not per_day,
        retry_after=next((delay for delay in delays if delay is not None), None),
        raw=body,
    )


def _seconds(value: Any) -> float | None:
    """Read a protobuf Duration: "34s", "1.5s", or {"seconds": 34, "nanos": 0}."""
    if isinstance(value, str):
        match = _DURATION.match(value)
        return float(match.group(1)) if match else None
    if isinstance(value, dict):
        seconds, nanos = value.get("seconds", 0), value.get("nanos", 0)
        try:
            return float(seconds) + float(nanos) / 1e9
        except (TypeError, ValueError):
            return None
    return None


def invalid_body(status: int, body: Any) -> ProviderError:
    """A 2xx body that is no GenerateContentResponse at all."""
    shown = body if isinstance(body, str) else type(body).__name__
    return ProviderError(
        status=status,
        type="invalid_response",
        code=None,
        message=f"not a GenerateContentResponse: {str(shown)[:120]!r}",
        retryable=False,
        raw=body,
    )
