"""A user's adapter: the built-in OpenAI Chat format under its own name and version.

`Adapter` has the client and read-back parts (so schema diff reads its requests);
`CLIENT_ONLY` has the client part alone; `NOT_AN_ADAPTER` lacks most of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcreplay.adapters import openai_chat
from fcreplay.adapters.capabilities import Capabilities
from fcreplay.decision import Decision, ProviderError
from fcreplay.inputs.contract import ToolSpec
from fcreplay.neutral import (
    HistoryItem,
    RequestSettings,
    RequestView,
    StreamEvent,
    ToolResult,
    WireRequest,
)


class ClientOnly:
    """Delegates the client part to openai_chat; only the name and version are its own."""

    NAME = "client_only"
    VERSION = "0.1"
    DEFAULT_BASE_URL = openai_chat.DEFAULT_BASE_URL
    API_KEY_HEADER = openai_chat.API_KEY_HEADER
    API_KEY_PREFIX = openai_chat.API_KEY_PREFIX
    CAPABILITIES: Capabilities = openai_chat.CAPABILITIES

    def build_request(
        self,
        model: str,
        messages: Sequence[HistoryItem],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> WireRequest:
        return openai_chat.build_request(model, messages, tools, settings)

    def parse_decision(self, status: int, body: Any) -> Decision | ProviderError:
        return openai_chat.parse_decision(status, body)

    def parse_stream(self, status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
        return openai_chat.parse_stream(status, events)

    def append_tool_result(
        self, messages: Sequence[HistoryItem], decision: Decision, results: Sequence[ToolResult]
    ) -> list[HistoryItem]:
        return openai_chat.append_tool_result(messages, decision, results)


class Renamed(ClientOnly):
    """The client part plus the read-back part, both openai_chat's."""

    NAME = "renamed_chat"
    VERSION = "7-user"

    def sent_tools(self, request_body: Any) -> list[ToolSpec]:
        return openai_chat.sent_tools(request_body)

    def read_request(self, body: dict[str, Any], path: str) -> RequestView:
        return openai_chat.read_request(body, path)

    def wire_schema(self, parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
        return openai_chat.wire_schema(parameters, strict)


Adapter = Renamed()
CLIENT_ONLY = ClientOnly()
NOT_AN_ADAPTER = object()
