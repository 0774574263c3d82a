"""A request's tool-loop history in no wire format's terms: who called what, where results stand.

An adapter's optional read-back method `read_history(body) -> History` fills
these from a request body; `judge.history.check_history` checks them against the
rules of the tool loop (every call answered exactly once, results where the wire
format wants them, no more steps than allowed) without knowing any wire field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fcreplay.quickinit import quick

Placement = Literal["next_message", "right_after", "after"]
"""Where the results of one assistant turn's calls must stand:

- `next_message`: all of them in the one message right after the turn (Anthropic,
  Gemini);
- `right_after`: one message per result, all right after the turn with nothing
  between (OpenAI Chat);
- `after`: anywhere after the call (OpenAI Responses).

docs/providers.md §2.6, §3.5, §4.6 and §5.6 give each format's rule.
"""

Pairing = Literal["id", "name"]
"""How a result says which call it answers: by call id, or by tool name and count
(Gemini, whose calls may carry no id)."""


@dataclass(frozen=True)
class HistoryCall:
    """One tool call an assistant turn made."""

    call_id: str | None
    name: str


@dataclass(frozen=True)
class HistoryResult:
    """One tool result given back to the model."""

    call_id: str | None
    name: str | None
    """The tool's name when the format repeats it beside the result."""
    is_error: bool = False


@quick
@dataclass(frozen=True)
class HistoryMessage:
    """One message of the history (or, for item-based formats, a run of items)."""

    index: int
    """Position among the messages the checker sees, 0-based."""
    pointer: str
    """JSON pointer to it in the request body, e.g. `/messages/3`: how problems name it."""
    calls: tuple[HistoryCall, ...] = ()
    """Tool calls of an assistant turn; empty for any other message."""
    results: tuple[HistoryResult, ...] = ()
    """Tool results the message carries; empty for any other message."""


@quick
@dataclass(frozen=True)
class History:
    """The tool-loop view of one request's conversation, in order."""

    messages: tuple[HistoryMessage, ...]
    placement: Placement
    pairing: Pairing = "id"

    @property
    def turns(self) -> tuple[HistoryMessage, ...]:
        """The assistant turns that made calls."""
        return tuple([message for message in self.messages if message.calls])
