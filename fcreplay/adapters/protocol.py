"""What an adapter provides, in three parts: the client, the read-back and the server part.

An adapter is any object with these members: a module (the built-in ones) or an
instance. Only the client part is required; code that needs another part checks
for it (`isinstance(adapter, ReadBackAdapter)`) and says so when it is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from fcreplay.adapters.capabilities import Capabilities
    from fcreplay.decision import Decision, ProviderError
    from fcreplay.history import History
    from fcreplay.inputs.contract import ToolSpec
    from fcreplay.neutral import (
        HistoryItem,
        RequestSettings,
        RequestView,
        StreamEvent,
        ToolResult,
        WireRequest,
        WireResponse,
    )


@runtime_checkable
class ClientAdapter(Protocol):
    """What `record` and `replay` need: build requests, read answers, continue the turn."""

    NAME: str
    """Written into cassettes and run records ("adapter")."""
    VERSION: str
    """Bumped whenever the requests it builds or its parsing change ("adapter_version")."""
    DEFAULT_BASE_URL: str
    API_KEY_HEADER: str
    """Header that carries the key; the transport fills it from the environment."""
    API_KEY_PREFIX: str
    """Prefix before the key in that header ("Bearer " or "")."""
    CAPABILITIES: Capabilities

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


@runtime_checkable
class ReadBackAdapter(Protocol):
    """What schema diff, lint and the simulator need: a sent request read back."""

    def sent_tools(self, request_body: Any) -> list[ToolSpec]: ...

    def read_request(self, body: dict[str, Any], path: str) -> RequestView: ...

    def wire_schema(self, parameters: dict[str, Any], strict: bool) -> dict[str, Any]: ...


@runtime_checkable
class HistoryReader(Protocol):
    """Optional read-back: a request's tool-loop history in neutral terms (`fcreplay.history`),
    which `judge.history` checks; the built-in adapters all have it."""

    def read_history(self, body: Any) -> History: ...


@runtime_checkable
class ServerAdapter(Protocol):
    """What only the simulator needs: answers rendered in the wire format."""

    def render_response(self, decision: Decision, stream: bool = False) -> WireResponse: ...

    def render_error(self, error: ProviderError, stream: bool = False) -> WireResponse: ...


def missing_members(adapter: object, part: type) -> list[str]:
    """The members of one part (a protocol above) that `adapter` lacks, in declaration order."""
    declared = [
        *part.__annotations__,
        *(name for name, value in vars(part).items() if callable(value) and name[0] != "_"),
    ]
    return [name for name in declared if not hasattr(adapter, name)]
