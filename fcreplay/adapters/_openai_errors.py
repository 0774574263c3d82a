"""OpenAI-style error envelopes, shared by both OpenAI adapters: fields, retry verdict, delay.

Reads the official envelope `{"error": {"message", "type", "param", "code"}}` and the
shapes OpenAI-compatible servers send instead (providers reference §2.8, §6.4): a
flat `{"object": "error", "message", ...}`, a string `error`, FastAPI's `detail`,
int codes, plain-text and HTML bodies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fcreplay.adapters._wire import is_retryable, json_text
from fcreplay.decision import ProviderError

QUOTA = "insufficient_quota"
"""Billing exhaustion arrives as a 429 but never clears by waiting."""
RETRYABLE_KINDS = frozenset({"server_error", "rate_limit_exceeded"})
"""Codes or types that make an error reported inside a 2xx (no error status) retryable."""

MESSAGE_LIMIT = 2000
"""An HTML error page is not a message worth keeping whole (`raw` keeps it)."""

_RETRY_HINT = re.compile(r"try again in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)", re.IGNORECASE)
_RETRY_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)", re.IGNORECASE)
_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0}


@dataclass(frozen=True)
class Envelope:
    """What an error body says, whatever its shape."""

    type: str | None = None
    code: str | None = None
    message: str | None = None
    """The envelope's own message text; None when it has none."""
    shown: Any = None
    """What to show instead when there is no message: an odd message/detail value or the body."""
    fields: Mapping[str, Any] = field(default_factory=dict)
    """The envelope object itself (nested `error` or the flat body); {} for a non-object."""


def read_envelope(body: Any) -> Envelope:
    """Read the type, code and message of an error body of any shape seen in the wild."""
    if isinstance(body, str):
        return Envelope(message=body.strip() or None, shown=body)
    if not isinstance(body, dict):
        return Envelope(shown=body)
    error = body.get("error")
    if isinstance(error, str) and error:
        return Envelope(_text(body.get("type")), _text(body.get("code")), error, error, body)
    source: dict[str, Any] = error if isinstance(error, dict) else body
    said = (source.get("message"), source.get("detail"), body.get("detail"))
    texts = (_text(value) for value in said)
    return Envelope(
        type=_text(source.get("type")),
        code=_text(source.get("code")),
        message=next((text for text in texts if text), None),
        shown=next((value for value in said if value), source),
        fields=source,
    )


def describe(envelope: Envelope) -> str | None:
    """The envelope's message, else the JSON of what it holds; None when it holds nothing."""
    if envelope.message:
        return envelope.message
    return json_text(envelope.shown) if envelope.shown else None


def provider_error(
    status: int, type_: str | None, code: str | None, message: str, raw: Any
) -> ProviderError:
    """An OpenAI-style error, its retry verdict and delay read from status, code, type, text.

    Quota exhaustion is never retryable. An error status decides by itself; an
    error reported inside a 2xx has none, so its code or type decides.
    """
    if QUOTA in (code, type_):
        retryable = False
    elif 400 <= status < 600:
        retryable = is_retryable(status)
    else:
        retryable = bool({code, type_} & RETRYABLE_KINDS)
    return ProviderError(
        status=status,
        type=type_,
        code=code,
        message=message[:MESSAGE_LIMIT],
        retryable=retryable,
        # A delay is only worth reading when a retry is.
        retry_after=retry_after(message) if retryable else None,
        raw=raw,
    )


def retry_after(message: str) -> float | None:
    """Seconds from OpenAI's "Please try again in 644ms" / "in 1m2.5s" hint.

    The message is the only place OpenAI always puts the delay; `retry-after`
    headers are not guaranteed and parsing sees only the body.
    """
    hint = _RETRY_HINT.search(message)
    if hint is None:
        return None
    return sum(
        float(amount) / 1000 if unit.lower() == "ms" else float(amount) * _SECONDS[unit.lower()]
        for amount, unit in _RETRY_PART.findall(hint.group(1))
    )


def error_object(error: ProviderError, message: str | None = None) -> dict[str, Any]:
    """The inner `{"message", "type", "param", "code"}` object of the envelope for `error`."""
    return {
        "message": error.message if message is None else message,
        "type": error.type,
        "param": None,
        "code": error.code,
    }


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None
