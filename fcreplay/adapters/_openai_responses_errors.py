"""Responses API errors: HTTP error bodies, failures inside a 2xx, in-stream error events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fcreplay.adapters._openai_errors import describe, provider_error, read_envelope
from fcreplay.adapters._wire import json_text
from fcreplay.decision import ProviderError


def http_error(status: int, body: Any, raw: Any = None) -> ProviderError:
    """The error of a non-2xx answer, whatever shape its body has."""
    envelope_body = body
    if isinstance(body, list) and body and isinstance(body[0], dict) and "data" in body[0]:
        # An error status answered to a stream request, kept as recorded events.
        envelope_body = body[0]["data"]
    envelope = read_envelope(envelope_body)
    message = describe(envelope) or f"HTTP {status} with an empty body"
    return provider_error(
        status, envelope.type, envelope.code, message, raw=body if raw is None else raw
    )


def failed(status: int, error: Any, raw: Any) -> ProviderError:
    """A model-side failure reported inside a 2xx (`status: failed` or an error event).

    The HTTP status stays the 2xx the answer came with, so only the code or type
    (`server_error`, `rate_limit_exceeded`) makes it retryable.
    """
    if not error:
        message = "the response failed without an error object"
        return provider_error(status, None, None, message, raw)
    envelope = read_envelope({"error": error})
    message = describe(envelope) or "the response failed without an error message"
    return provider_error(status, envelope.type, envelope.code, message, raw)


def stream_error(status: int, data: Mapping[str, Any], raw: Any) -> ProviderError:
    """The error of an in-stream `error` event, nested or flat."""
    nested = data.get("error")
    if nested:
        return failed(status, nested, raw)
    # The spec's ResponseErrorEvent is flat and has no error type of its own.
    flat = {key: data.get(key) for key in ("code", "message")}
    return failed(status, flat, raw)


def odd_body(status: int, body: Any) -> ProviderError:
    """A 2xx body that is no Responses API answer at all."""
    return ProviderError(
        status=status,
        type=None,
        code=None,
        message="not a Responses API body: " + json_text(body)[:200],
        retryable=False,
        raw=body,
    )
