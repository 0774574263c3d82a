"""OpenAI Responses history read back: `function_call` items and their `function_call_output`s.

Consecutive `function_call` items (with the reasoning items among them) are one
assistant turn; each `function_call_output` is one result, paired by `call_id`
and standing anywhere after its call (providers.md §3.5).
"""

from __future__ import annotations

from typing import Any

from fcreplay.adapters._wire import as_dict, as_list, plain_message
from fcreplay.history import History, HistoryCall, HistoryMessage, HistoryResult

_IN_TURN = frozenset({"function_call", "reasoning"})


def read_history(body: Any) -> History:
    """The tool-loop view of a Responses request's `input` items."""
    found: list[HistoryMessage] = []
    turn: list[HistoryCall] = []
    start = 0
    items = as_list(as_dict(body).get("input"))
    for position, item in enumerate(items):
        item = as_dict(item)
        kind = item.get("type")
        if kind in _IN_TURN:
            if not turn and kind == "function_call":
                start = position
            if kind == "function_call":
                turn.append(HistoryCall(_id(item), str(item.get("name", ""))))
            continue
        if turn:
            found.append(HistoryMessage(len(found), f"/input/{start}", tuple(turn)))
            turn = []
        if kind == "function_call_output":
            results = (HistoryResult(_id(item), None),)
            found.append(HistoryMessage(len(found), f"/input/{position}", results=results))
        else:
            found.append(plain_message("/input", len(found), position))
    if turn:
        found.append(HistoryMessage(len(found), f"/input/{start}", tuple(turn)))
    return History(tuple(found), placement="after")


def _id(item: dict[str, Any]) -> str | None:
    call_id = item.get("call_id")
    return call_id if isinstance(call_id, str) else None
