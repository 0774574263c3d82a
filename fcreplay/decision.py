"""The provider-neutral outcome of one model turn: tool calls, text, refusal or invalid."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from fcreplay.canonical import canonical_json
from fcreplay.quickinit import quick
from fcreplay.strictjson import exact_json

DecisionKind = Literal["tool_call", "text", "refusal", "invalid"]

Stop = Literal[
    "tool_call",  # call items present
    "end",  # the model finished its turn
    "length",  # cut off by an output-token limit
    "content_filter",  # stopped or blocked by a safety system
    "refusal",  # the model declined
    "malformed_call",  # the provider says the call it generated is unusable
    "pause",  # a long server-side turn paused; resend to continue
    "other",  # anything else, kept raw in `finish_reason`
]


@quick
@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call requested by the model."""

    call_id: str | None
    """Provider-assigned id to echo with the result; None when the provider sent none."""
    name: str
    arguments: dict[str, Any] | None
    """Decoded arguments; None when the model sent something that is not a JSON object."""
    raw_arguments: str | dict[str, Any] | None
    """Exactly what the model sent: a JSON string (OpenAI) or an object (Anthropic, Gemini)."""

    def to_json(self) -> dict[str, Any]:
        """Return the call as a JSON-ready dict."""
        return {
            "call_id": self.call_id,
            "name": self.name,
            "arguments": self.arguments,
            "raw_arguments": self.raw_arguments,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolCall:
        """Rebuild a call from `to_json` output."""
        return cls(
            call_id=data.get("call_id"),
            name=data["name"],
            arguments=data.get("arguments"),
            raw_arguments=data.get("raw_arguments"),
        )


@quick
@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one answer cost, normalized across providers.

    `input_tokens` counts every input token, cached ones included (Anthropic reports
    cache reads and writes apart; they are added here); `output_tokens` every output
    token, reasoning included (Gemini reports thoughts apart; they are added here).
    `cached_tokens` and `reasoning_tokens` are the parts of those. None: not reported.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None

    def to_json(self) -> dict[str, int | None]:
        """The usage as written in run logs."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }

    @classmethod
    def from_json(cls, data: Any) -> Usage | None:
        """Read a usage block; None for anything else."""
        if not isinstance(data, dict):
            return None
        return cls(*(_count(data.get(key)) for key in _USAGE_KEYS))


_USAGE_KEYS = ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens")


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@quick
@dataclass(frozen=True, slots=True)
class Decision:
    """What the model decided in one turn, normalized across providers.

    Equality covers the normalized fields only: a streamed exchange and its
    non-streamed twin give equal decisions though their raw bodies differ.
    """

    kind: DecisionKind
    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    """The provider's own stop value, unchanged, whatever its wire format calls it."""
    stop: Stop = "end"
    """`finish_reason` mapped to a provider-neutral value."""
    raw_response: Any = field(default=None, compare=False, repr=False)
    """The whole response body (or the list of stream events), after redaction."""
    assistant_turn: Any = field(default=None, compare=False, repr=False)
    """The provider-native assistant turn, re-sent verbatim with the tool results."""
    model: str | None = field(default=None, compare=False)
    """The model id as the provider reported it."""
    usage: Usage | None = field(default=None, compare=False)
    """What the answer cost in tokens, when the provider said."""

    def to_json(self) -> dict[str, Any]:
        """Return the normalized fields as a JSON-ready dict (usage only when known)."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "text": self.text,
            "finish_reason": self.finish_reason,
            "stop": self.stop,
            "calls": [call.to_json() for call in self.calls],
        }
        if self.usage is not None:
            data["usage"] = self.usage.to_json()
        return data

    def with_usage(self, usage: Usage | None) -> Decision:
        """The decision with `usage` (what `dataclasses.replace` gives, made directly:
        every turn of a replay makes one)."""
        return Decision(
            self.kind,
            self.text,
            self.calls,
            self.finish_reason,
            self.stop,
            self.raw_response,
            self.assistant_turn,
            self.model,
            usage,
        )

    def as_logged(self, finish_reason: str | None, model: str | None) -> Decision:
        """The decision as a record keeps it: without the raw body and the native turn,
        `finish_reason` and `model` given (one object for the texts many share)."""
        return Decision(
            self.kind,
            self.text,
            self.calls,
            finish_reason,
            self.stop,
            None,
            None,
            model,
            self.usage,
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        """Rebuild a decision from `to_json` output (raw parts are not kept there)."""
        return cls(
            kind=data["kind"],
            text=data.get("text"),
            calls=tuple(ToolCall.from_json(call) for call in data.get("calls", [])),
            finish_reason=data.get("finish_reason"),
            stop=data.get("stop", "end"),
            usage=Usage.from_json(data.get("usage")),
        )


@dataclass(frozen=True, slots=True)
class ProviderError:
    """An error answer from the provider: a non-2xx body or an in-stream error event."""

    status: int
    type: str | None
    code: str | None
    message: str
    retryable: bool
    retry_after: float | None = None
    """Seconds the provider asked to wait, when its body says so (Gemini RetryInfo)."""
    raw: Any = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """Return the error as a JSON-ready dict."""
        return {
            "status": self.status,
            "type": self.type,
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "retry_after": self.retry_after,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProviderError:
        """Rebuild an error from `to_json` output (the raw body is not kept there)."""
        return cls(
            status=int(data["status"]),
            type=data.get("type"),
            code=data.get("code"),
            message=str(data.get("message", "")),
            retryable=bool(data.get("retryable")),
            retry_after=data.get("retry_after"),
        )


Signature = tuple[str, tuple[str, ...], str]


def signature(decision: Decision) -> Signature:
    """Return `(kind, sorted call names, canonical arguments)` for consistency checks.

    Arguments that are not a JSON object enter as their raw text, so two
    different malformed calls never share a signature.
    """
    if not decision.calls:
        return (decision.kind, (), "[]")  # an answer without calls: nothing to sort
    calls = sorted([(call.name, _canonical(_argument_value(call))) for call in decision.calls])
    names = tuple([name for name, _ in calls])
    arguments = "[" + ",".join(args for _, args in calls) + "]"
    return (decision.kind, names, arguments)


def _canonical(value: Any) -> str:
    # By exact bytes: a unit's attempts mostly make the same calls. Equal bytes without a
    # `null` (which may stand for NaN) are equal values, with one canonical text.
    exact = exact_json(value)
    if exact is None or b"null" in exact:
        return canonical_json(value)
    known = _CANONICAL.get(exact)
    if known is None:
        if len(_CANONICAL) >= 4096:
            _CANONICAL.clear()
        known = _CANONICAL[exact] = canonical_json(value)
    return known


_CANONICAL: dict[bytes, str] = {}


def _argument_value(call: ToolCall) -> Any:
    if call.arguments is not None:
        return call.arguments
    return {"$raw": call.raw_arguments}
