"""Provider-neutral request and response shapes that adapters translate to and from."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from fcreplay.canonical import sorted_json
from fcreplay.quickinit import quick

SIMULATED_LATENCY_HEADER = "x-fcreplay-simulated-latency-ms"
"""Response header of fcreplay's own simulator: the latency it simulates. A recording
takes it instead of the loopback round trip, which says nothing and would make every
re-recording of a synthetic suite differ."""

ATTEMPT_HEADER = "x-fcreplay-attempt"
"""Request header `fcreplay record` sends: the attempt's number (nothing else). Providers
ignore it; fcreplay's simulator answers by it, so re-recording a synthetic suite gives
the same answers and call ids whatever the simulator served before."""

Role = Literal["system", "user", "assistant"]
ToolMode = Literal["auto", "required", "forced", "none", "no_tools"]
StreamFraming = Literal["sse", "ndjson", "aws-eventstream"]
"""How a format frames stream events on the wire: server-sent events, one JSON object
per line, or AWS's binary event stream."""


@dataclass(frozen=True, slots=True)
class Message:
    """A plain text message of the conversation, in no provider's format."""

    role: Role
    content: str


@dataclass(frozen=True)
class WireItem:
    """A provider-native history item, sent back verbatim.

    `append_tool_result` produces these: the assistant turn exactly as the
    provider returned it (thinking signatures, reasoning items) and the tool
    results in the shape that provider requires.
    """

    payload: Any


HistoryItem = Message | WireItem


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """How the request lets the model use tools."""

    mode: ToolMode = "auto"
    """auto: model decides; required: must call some tool; forced: must call `tool`;
    none: tools declared but not usable; no_tools: no tools declared at all."""
    tool: str | None = None

    @classmethod
    def parse(cls, value: str | dict[str, Any] | None) -> ToolChoice:
        """Read a case-file value: "auto" | "required" | "none" | {"tool": NAME}."""
        if value is None or value == "auto":
            return cls("auto")
        if value in ("required", "none"):
            return cls(value)  # type: ignore[arg-type]
        if isinstance(value, dict) and set(value) == {"tool"}:
            return cls("forced", str(value["tool"]))
        raise ValueError(
            f'tool_choice must be "auto", "required", "none" or {{"tool": NAME}}, got {value!r}'
        )


@dataclass(frozen=True)
class RequestSettings:
    """Everything about a request except the model, the history and the tools."""

    tool_choice: ToolChoice = field(default_factory=ToolChoice)
    parallel_tool_calls: bool | None = None
    """None leaves the provider default; False asks for at most one call per turn."""
    strict: bool = False
    """Ask for provider-side schema enforcement, with the transform it needs."""
    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    stream: bool = False


@quick
@dataclass(frozen=True)
class WireRequest:
    """A request body ready to send; the transport adds the base URL and the key."""

    method: str
    path: str
    """Path (and query) relative to the provider's base URL."""
    headers: dict[str, str]
    """Non-secret headers only; credentials never appear here."""
    body: dict[str, Any]
    stream: bool = False

    @cached_property
    def body_json(self) -> str:
        """The body as compact JSON with sorted keys (computed once per request)."""
        return sorted_json(self.body)

    @cached_property
    def body_sha256(self) -> str:
        """sha256 of `body_json`: the same for the same body, whatever its key order."""
        return hashlib.sha256(self.body_json.encode("utf-8")).hexdigest()

    def assume_sha256(self, digest: str) -> None:
        """Take the hash of a body known to be identical (replay: the recorded one)."""
        self.__dict__.setdefault("body_sha256", digest)


@quick
@dataclass(frozen=True)
class StreamEvent:
    """One server-sent event: its `event:` name and its data, parsed when JSON."""

    event: str | None
    data: Any
    """The decoded JSON payload, or the raw string (e.g. "[DONE]") when not JSON."""


@quick
@dataclass(frozen=True)
class WireResponse:
    """A response as it came off the wire, or out of a cassette: a body or stream events."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    """Lower-case names, first value of each."""
    body: Any = None
    """Parsed JSON, text, bytes that are not text (binary protocols), or None for streams."""
    events: tuple[StreamEvent, ...] | None = None
    """SSE events (or the elements of Gemini's JSON-array stream); None when not a stream."""
    latency_ms: int | None = field(default=None, compare=False)
    """How long the provider took to answer, as measured when it was recorded."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What the (fake) executor returned for one call."""

    call_id: str | None
    name: str
    content: dict[str, Any]
    """JSON object given back to the model."""
    is_error: bool = False

    def to_json(self) -> dict[str, Any]:
        """Return the result as a JSON-ready dict."""
        return {
            "call_id": self.call_id,
            "name": self.name,
            "content": self.content,
            "is_error": self.is_error,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolResult:
        """Rebuild a result from `to_json` output."""
        return cls(data["call_id"], data["name"], data["content"], bool(data["is_error"]))


@dataclass(frozen=True)
class RequestView:
    """What a sent request asked for, read back from its wire body (inverse of build).

    The simulator uses it to pick an answer; schema diff uses it to compare the
    tool choice and parallel policy with what the variant asked.
    """

    model: str | None
    last_user_text: str | None
    """Text of the last plain user message (tool results are not user text)."""
    tool_result_turns: int
    """How many tool-result turns the history holds: 0 on the first turn."""
    tool_names: tuple[str, ...]
    """Declared function tools, in the order sent."""
    tool_choice: ToolChoice
    parallel_tool_calls: bool | None
    """None when the request leaves the provider default."""
    stream: bool


class TransportError(Exception):
    """The request got no HTTP answer: connection refused, timeout, broken stream."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    def to_json(self) -> dict[str, Any]:
        """The error as recorded in an attempt."""
        return {"type": self.kind, "message": str(self)}


@dataclass(frozen=True)
class RoundTrip:
    """One HTTP round trip, as it is recorded (credentials are never part of it)."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: dict[str, Any]
    response: WireResponse
