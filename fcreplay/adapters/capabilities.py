"""What an adapter declares about its wire format, as data the rest of fcreplay asks for.

Modules outside `fcreplay.adapters` never branch on an adapter's name: schema diff,
lint, the cassette reader and the simulator read these fields instead, so a new
wire format (a user's adapter) is described in one place, its own module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, get_args
from urllib.parse import parse_qsl, urlsplit

from fcreplay.neutral import StreamFraming, ToolMode

if TYPE_CHECKING:
    from fcreplay.decision import Stop
    from fcreplay.lint.rules import LintRules

TOOL_MODES: frozenset[ToolMode] = frozenset(get_args(ToolMode))
"""Every tool-choice mode a request can be built with."""


@dataclass(frozen=True)
class StreamPath:
    """A format that asks for a stream in the request path rather than in the body."""

    marker: str
    """Present in the path of every streaming request (e.g. a `:stream...` method)."""
    sse_query: tuple[str, str] | None = None
    """The query parameter that asks for SSE; a streaming request without it gets one JSON
    array of the chunks instead. None: streams are always SSE."""

    def streams(self, url: str) -> bool:
        """Whether a request URL asks for a stream."""
        return self.marker in urlsplit(url).path

    def json_array(self, url: str) -> bool:
        """Whether a request URL asks for the stream as one JSON array of chunks."""
        if self.sse_query is None or not self.streams(url):
            return False
        return self.sse_query not in parse_qsl(urlsplit(url).query)


@dataclass(frozen=True)
class Capabilities:
    """Facts about one wire format that code outside the adapter needs.

    The defaults describe a plain JSON-over-HTTP format with SSE streams asked for in
    the body, a parallel-calls knob in every tool-choice mode, arguments as JSON
    objects, and no provider lint rules.
    """

    url_markers: tuple[str, ...] = ()
    """How a request URL is recognised as this format: path endings ("/chat/completions"),
    or Google-style methods starting with ":" (":generateContent"), found anywhere in the
    path. Routes the simulator and `fcreplay inspect`."""
    stream_path: StreamPath | None = None
    """Set when streaming is asked for in the path; None when the body asks."""
    conversation_keys: frozenset[str] = frozenset()
    """Top-level request keys that carry the conversation (they change every turn), so
    schema diff leaves them out of a request's fingerprint. Empty: the whole body."""
    parallel_knob: frozenset[ToolMode] = TOOL_MODES
    """Tool-choice modes whose requests can carry the parallel-calls policy; in the other
    modes a request that leaves it out is not a `parallel_mismatch`."""
    tool_choice_modes: frozenset[ToolMode] = TOOL_MODES
    """Tool-choice modes the format can ask for; a request in another mode goes out as
    the nearest it has ("auto"), which is then not a `tool_choice_mismatch` (lint says
    so once instead)."""
    string_arguments: bool = False
    """Calls carry their arguments as JSON text, so unparseable arguments can be sent as
    they are; otherwise arguments are JSON objects and the simulator sends
    `broken_call_stop` instead."""
    broken_call_stop: Stop = "malformed_call"
    """The nearest real failure of an object-argument format: "malformed_call" ends the
    turn without the call, "length" cuts the call off at the output-token limit."""
    lint: LintRules | None = None
    """The provider's rules `fcreplay lint` checks the contract against; None: none."""
    stream_framing: StreamFraming = "sse"
    """How streamed answers are framed: SSE, NDJSON lines (Ollama's native API) or the AWS
    binary event stream (Bedrock); the simulator writes it, cassette readers decode it."""
    opt_in_settings: frozenset[str] = frozenset()
    """Suite-wide `RequestSettings` fields ("temperature", "top_p") this format is sent
    only when a target sets them itself: its recent models reject them."""

    def json_array_stream(self, url: str) -> bool:
        """Whether a request URL asks for its stream as one JSON array of chunks."""
        return self.stream_path is not None and self.stream_path.json_array(url)

    def streams_by_url(self, url: str) -> bool:
        """Whether a request URL (not its body) asks for a stream."""
        return self.stream_path is not None and self.stream_path.streams(url)
