"""Anthropic history read back: `tool_use` blocks and the `tool_result` blocks answering them.

All results of one assistant turn belong in the one user message right after it
(providers.md §4.6); splitting them teaches the model to stop calling in parallel.
"""

from __future__ import annotations

from typing import Any

from fcreplay.adapters._wire import as_dict, as_list, plain_message
from fcreplay.history import History, HistoryCall, HistoryMessage, HistoryResult


def read_history(body: Any) -> History:
    """The tool-loop view of a Messages request's `messages`."""
    found = []
    for index, message in enumerate(as_list(as_dict(body).get("messages"))):
        message = as_dict(message)
        blocks = [as_dict(block) for block in as_list(message.get("content"))]
        calls: tuple[HistoryCall, ...] = ()
        results: tuple[HistoryResult, ...] = ()
        if message.get("role") == "assistant":
            calls = tuple(
                HistoryCall(_text(block.get("id")), str(block.get("name", "")))
                for block in blocks
                if block.get("type") == "tool_use"
            )
        else:
            results = tuple(
                HistoryResult(_text(block.get("tool_use_id")), None, block.get("is_error") is True)
                for block in blocks
                if block.get("type") == "tool_result"
            )
        if calls or results:
            found.append(HistoryMessage(index, f"/messages/{index}", calls, results))
        else:
            found.append(plain_message("/messages", index))
    return History(tuple(found), placement="next_message")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
