"""Anthropic error envelopes read into ProviderErrors, from HTTP bodies and stream events."""

from __future__ import annotations

import re
from typing import Any

from fcreplay.adapters._wire import is_retryable
from fcreplay.decision import ProviderError
from fcreplay.neutral import StreamEvent

STATUS_BY_ERROR_TYPE: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status each documented error type comes with."""
_NOT_RETRYABLE_TYPES = frozenset({"billing_error"})
_SPEND_LIMIT = re.compile(
    r"usage limit|spend(?:ing)? (?:limit|cap)|credit balance|billing|quota|extra usage"
    r"|regain access",
    re.IGNORECASE,
)
"""Messages of errors that retrying will not fix (observed: "You have reached your
specified API usage limits. You will regain access on ...", "Your credit balance is
too low ...", "Extra usage is required for long context requests.")."""


def is_error_envelope(body: Any) -> bool:
    """Whether a 2xx body is an error envelope rather than a message."""
    return isinstance(body, dict) and (body.get("type") == "error" or "error" in body)


def is_error_event(event: StreamEvent) -> bool:
    """Whether a stream event is an in-stream `error` event."""
    data = event.data
    return event.event == "error" or (isinstance(data, dict) and data.get("type") == "error")


def status_of_error(data: Any) -> int:
    """The HTTP status an error type stands for, for errors that arrive inside a 200."""
    kind = _error_fields(data)[0]
    return STATUS_BY_ERROR_TYPE.get(kind or "", 500)


def read_error(status: int, body: Any, raw: Any = None) -> ProviderError:
    """The ProviderError of an error body; spend caps are never retryable."""
    kind, code, message = _error_fields(body)
    retryable = (
        is_retryable(status)
        and kind not in _NOT_RETRYABLE_TYPES
        and not _SPEND_LIMIT.search(message)
    )
    return ProviderError(
        status=status,
        type=kind,
        code=code,
        message=message or f"HTTP {status}",
        retryable=retryable,
        retry_after=None,
        raw=body if raw is None else raw,
    )


def _error_fields(body: Any) -> tuple[str | None, str | None, str]:
    """(type, code, message) of an error body, whatever its shape."""
    if isinstance(body, str):
        return None, None, body.strip()[:500]
    if not isinstance(body, dict):
        return None, None, ""
    inner = body.get("error")
    if isinstance(inner, str):
        return _text_or_none(body.get("type"), skip="error"), None, inner
    source = inner if isinstance(inner, dict) else body
    kind = _text_or_none(source.get("type"), skip="error")
    code = source.get("code")
    message = source.get("message")
    return (
        kind,
        str(code) if isinstance(code, str | int) and not isinstance(code, bool) else None,
        message if isinstance(message, str) else "",
    )


def _text_or_none(value: Any, skip: str) -> str | None:
    return value if isinstance(value, str) and value != skip else None
