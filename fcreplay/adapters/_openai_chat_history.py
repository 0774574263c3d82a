"""OpenAI Chat history read back: assistant `tool_calls` and the `tool` messages answering them.

Each `tool` (or legacy `function`) message is one result; they must follow the
assistant message that made the calls, before any other message (providers.md §2.6).
"""

from __future__ import annotations

from typing import Any

from fcreplay.adapters._wire import as_dict, as_list, plain_message
from fcreplay.history import History, HistoryCall, HistoryMessage, HistoryResult


def read_history(body: Any) -> History:
    """The tool-loop view of a Chat Completions request's `messages`."""
    found = []
    for index, message in enumerate(as_list(as_dict(body).get("messages"))):
        message = as_dict(message)
        role = message.get("role")
        calls: tuple[HistoryCall, ...] = ()
        results: tuple[HistoryResult, ...] = ()
        if role == "assistant":
            calls = tuple(_call(call) for call in as_list(message.get("tool_calls")))
            legacy = message.get("function_call")
            if not calls and isinstance(legacy, dict):
                calls = (HistoryCall(None, str(legacy.get("name", ""))),)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            results = (HistoryResult(call_id if isinstance(call_id, str) else None, None),)
        elif role == "function":
            results = (HistoryResult(None, str(message.get("name", ""))),)
        if calls or results:
            found.append(HistoryMessage(index, f"/messages/{index}", calls, results))
        else:
            found.append(plain_message("/messages", index))
    return History(tuple(found), placement="right_after")


def _call(call: Any) -> HistoryCall:
    call = as_dict(call)
    call_id = call.get("id")
    name = as_dict(call.get("function")).get("name")
    return HistoryCall(call_id if isinstance(call_id, str) else None, str(name or ""))
