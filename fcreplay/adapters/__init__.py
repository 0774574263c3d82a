"""Provider adapters: pure translation between fcreplay's neutral types and one wire format.

Each adapter module exposes the functions of the `Adapter` protocol and does no
I/O. Modules are imported on first use, so `fcreplay --help` stays light.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from fcreplay.decision import Decision, ProviderError
    from fcreplay.exchange import (
        HistoryItem,
        RequestSettings,
        RequestView,
        StreamEvent,
        ToolResult,
        WireRequest,
        WireResponse,
    )
    from fcreplay.inputs.contract import ToolSpec

ADAPTERS: dict[str, str] = {
    "openai_chat": "fcreplay.adapters.openai_chat",
    "openai_responses": "fcreplay.adapters.openai_responses",
    "anthropic": "fcreplay.adapters.anthropic",
    "gemini": "fcreplay.adapters.gemini",
}


class Adapter(Protocol):
    """What every adapter module provides."""

    NAME: str
    VERSION: str
    """Bumped whenever the requests it builds or its parsing change."""
    DEFAULT_BASE_URL: str
    API_KEY_HEADER: str
    """Header that carries the key; the transport fills it from the environment."""
    API_KEY_PREFIX: str
    """Prefix before the key in that header ("Bearer " or "")."""

    def build_request(
        self,
        model: str,
        messages: Sequence[HistoryItem],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> WireRequest: ...

    def parse_decision(self, status: int, body: Any) -> Decision | ProviderError: ...

    def parse_stream(
        self, status: int, events: Sequence[StreamEvent]
    ) -> Decision | ProviderError: ...

    def append_tool_result(
        self,
        messages: Sequence[HistoryItem],
        decision: Decision,
        results: Sequence[ToolResult],
    ) -> list[HistoryItem]: ...

    def sent_tools(self, request_body: Any) -> list[ToolSpec]: ...

    def read_request(self, body: dict[str, Any], path: str) -> RequestView: ...

    def wire_schema(self, parameters: dict[str, Any], strict: bool) -> dict[str, Any]: ...

    def render_response(self, decision: Decision, stream: bool = False) -> WireResponse: ...

    def render_error(self, error: ProviderError, stream: bool = False) -> WireResponse: ...


_URL_MARKERS: tuple[tuple[str, str], ...] = (
    (":streamGenerateContent", "gemini"),
    (":generateContent", "gemini"),
    ("/chat/completions", "openai_chat"),
    ("/responses", "openai_responses"),
    ("/messages", "anthropic"),
)


def api_for_url(url: str) -> str | None:
    """Name the adapter whose wire format a request URL uses, or None for other APIs."""
    path = url.split("#", 1)[0].split("?", 1)[0]
    for marker, name in _URL_MARKERS:
        if path.endswith(marker) or (marker.startswith(":") and marker in path):
            return name
    return None


class UnknownAdapterError(ValueError):
    """No adapter by that name."""


def get_adapter(name: str) -> Adapter:
    """Return the adapter called `name`, importing its module on first use."""
    try:
        module = ADAPTERS[name]
    except KeyError:
        close = difflib.get_close_matches(name, ADAPTERS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownAdapterError(
            f"unknown adapter {name!r} (known: {', '.join(ADAPTERS)}){hint}"
        ) from None
    return cast("Adapter", importlib.import_module(module))
