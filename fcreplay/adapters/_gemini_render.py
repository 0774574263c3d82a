"""Gemini answers and errors rendered for the simulator: bodies and SSE chunks."""

from __future__ import annotations

from typing import Any

import fcreplay.jsoncopy as jsoncopy
from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._gemini_decision import BLOCK_PREFIX
from fcreplay.canonical import canonical_hash
from fcreplay.decision import Decision, ProviderError, Stop
from fcreplay.neutral import StreamEvent, WireResponse

RESPONSE_HEADERS = {"content-type": "application/json; charset=UTF-8"}
STREAM_HEADERS = {"content-type": "text/event-stream"}
_SIMULATED_SIGNATURE = "ZmNyZXBsYXktc2ltdWxhdG9y"  # base64("fcreplay-simulator")

_NATURAL_FINISH: dict[Stop, str] = {
    "tool_call": "STOP",
    "end": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
    "refusal": "SAFETY",
    "malformed_call": "MALFORMED_FUNCTION_CALL",
    "pause": "OTHER",
    "other": "OTHER",
}
CANONICAL_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""google.rpc.Code names rendered as `status` for errors that carry no type of their own."""
_RPC = "type.googleapis.com/google.rpc."
_QUOTA_METRIC = "generativelanguage.googleapis.com/generate_content_requests"


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """Render a decision as a realistic Gemini response body or SSE chunk list."""
    model = decision.model or _wire.SIMULATOR_MODEL
    finish = _finish_for(decision)
    envelope: dict[str, Any] = {
        "modelVersion": model,
        "responseId": "fcr" + canonical_hash(decision.to_json())[:21],
    }
    usage = {
        "promptTokenCount": 64,
        "candidatesTokenCount": 8 + len(decision.text or "") // 4 + 16 * len(decision.calls),
    }
    usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"]
    if decision.usage is not None:
        usage = _usage.gemini_block(decision.usage)
    if finish is not None and finish.startswith(BLOCK_PREFIX):
        blocked = {
            "promptFeedback": {"blockReason": finish.removeprefix(BLOCK_PREFIX)},
            "usageMetadata": {"promptTokenCount": 64, "totalTokenCount": 64},
            **envelope,
        }
        if stream:
            return WireResponse(200, dict(STREAM_HEADERS), events=(StreamEvent(None, blocked),))
        return WireResponse(200, dict(RESPONSE_HEADERS), body=blocked)
    parts = model_parts(decision, signed=True)
    if not stream:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts} if parts else {}}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        body = {"candidates": [candidate], "usageMetadata": usage, **envelope}
        return WireResponse(200, dict(RESPONSE_HEADERS), body=body)
    pieces: list[list[dict[str, Any]]] = []
    for part in parts:
        if "text" in part:
            pieces.extend([{"text": fragment}] for fragment in _fragments(part["text"]))
        else:
            pieces.append([part])
    if decision.calls and finish is not None:
        pieces.append([{"text": ""}])  # as observed: calls, then an empty text part that finishes
    chunks: list[dict[str, Any]] = []
    for piece in pieces or [[]]:
        content = {"role": "model", "parts": piece} if piece else {}
        chunks.append({"candidates": [{"content": content, "index": 0}], **envelope})
    if finish is not None:
        chunks[-1]["candidates"][0]["finishReason"] = finish
        chunks[-1]["usageMetadata"] = usage
    events = tuple(StreamEvent(None, chunk) for chunk in chunks)
    return WireResponse(200, dict(STREAM_HEADERS), events=events)


def _finish_for(decision: Decision) -> str | None:
    if decision.finish_reason is not None:
        return decision.finish_reason
    if decision.kind == "invalid" and decision.stop == "other":
        return None  # an unfinished turn: the candidate carries no finishReason
    return _NATURAL_FINISH[decision.stop]


def model_parts(decision: Decision, *, signed: bool) -> list[dict[str, Any]]:
    """The `parts` of the model turn for `decision`; `signed` adds a thought signature."""
    parts: list[dict[str, Any]] = []
    if decision.text:
        parts.append({"text": decision.text})
    for index, call in enumerate(decision.calls):
        function: dict[str, Any] = {"name": call.name}
        args = call.raw_arguments if call.raw_arguments is not None else call.arguments or None
        if args is not None:
            function["args"] = jsoncopy.copied(args)
        if call.call_id is not None:
            function["id"] = call.call_id
        part: dict[str, Any] = {"functionCall": function}
        if signed and index == 0:
            part["thoughtSignature"] = _SIMULATED_SIGNATURE
        parts.append(part)
    return parts


def _fragments(text: str, count: int = 3) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[start : start + size] for start in range(0, len(text), size)]


def render_error(error: ProviderError, stream: bool = False) -> WireResponse:
    """Render the `google.rpc.Status` envelope of `error`.

    Gemini answers a failed streaming request with the same plain JSON body
    (not an SSE event), so `stream` changes nothing. A 429 names a per-minute
    quota when retryable and a per-day quota when not; `retry_after` becomes
    a RetryInfo detail.
    """
    del stream  # errors to streaming requests are plain bodies too
    details: list[dict[str, Any]] = []
    if error.code:
        details.append(
            {
                "@type": _RPC + "ErrorInfo",
                "reason": error.code,
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        )
    if error.status == 429:
        period = "PerMinute" if error.retryable else "PerDay"
        details.append(
            {
                "@type": _RPC + "QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": _QUOTA_METRIC,
                        "quotaId": f"GenerateRequests{period}PerProjectPerModel",
                    }
                ],
            }
        )
    if error.retry_after is not None:
        seconds = f"{error.retry_after:.9f}".rstrip("0").rstrip(".")
        details.append({"@type": _RPC + "RetryInfo", "retryDelay": seconds + "s"})
    envelope: dict[str, Any] = {
        "code": error.status,
        "message": error.message,
        "status": error.type or CANONICAL_STATUS.get(error.status, "UNKNOWN"),
    }
    if details:
        envelope["details"] = details
    return WireResponse(error.status, dict(RESPONSE_HEADERS), body={"error": envelope})
