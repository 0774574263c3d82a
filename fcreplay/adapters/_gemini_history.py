"""Gemini history read back: `functionCall` parts and the `functionResponse` parts answering them.

One user content right after the model turn holds one `functionResponse` per
`functionCall`, same names, same count (providers.md §5.6); calls may carry no id,
so results are paired by name and count.
"""

from __future__ import annotations

from typing import Any

from fcreplay.adapters._wire import as_dict, as_list, plain_message
from fcreplay.history import History, HistoryCall, HistoryMessage, HistoryResult


def read_history(body: Any) -> History:
    """The tool-loop view of a generateContent request's `contents`."""
    found = []
    for index, content in enumerate(as_list(as_dict(body).get("contents"))):
        parts = [as_dict(part) for part in as_list(as_dict(content).get("parts"))]
        calls = tuple(
            HistoryCall(_text(call.get("id")), str(call.get("name", "")))
            for call in (_part(part, "functionCall", "function_call") for part in parts)
            if call is not None
        )
        results = tuple(
            HistoryResult(_text(response.get("id")), _text(response.get("name")))
            for response in (_part(part, "functionResponse", "function_response") for part in parts)
            if response is not None
        )
        if calls or results:
            found.append(HistoryMessage(index, f"/contents/{index}", calls, results))
        else:
            found.append(plain_message("/contents", index))
    return History(tuple(found), placement="next_message", pairing="name")


def _part(part: dict[str, Any], camel: str, snake: str) -> dict[str, Any] | None:
    value = part.get(camel, part.get(snake))
    return value if isinstance(value, dict) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
