"""Helpers shared by all adapters: arguments and calls, stop mapping, truncation, plumbing."""

from __future__ import annotations

import json
import operator
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import fcreplay.strictjson as strictjson
from fcreplay.canonical import canonical_json
from fcreplay.decision import Decision, ProviderError, Stop, ToolCall
from fcreplay.history import HistoryMessage
from fcreplay.neutral import HistoryItem, Message, StreamEvent, WireItem

if TYPE_CHECKING:
    from fcreplay.inputs.contract import ToolSpec

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""Statuses the official SDKs retry (plus Anthropic's 529 overloaded)."""

SIMULATOR_MODEL = "fcreplay-simulator"
"""Model id rendered for a decision that names none."""


def decode_arguments(raw: Any) -> dict[str, Any] | None:
    """Decode call arguments as sent: a JSON string, an object, or nothing.

    Returns None when they are not a JSON object; the raw value is kept by the
    caller and never repaired. Empty or absent arguments mean a no-argument call.
    """
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            # Strict: NaN, infinity or deep nesting in what a model wrote is not
            # JSON, so the call reads as invalid_json with the raw text kept.
            value = strictjson.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def encode_arguments(arguments: Mapping[str, Any]) -> str:
    """Encode arguments as the compact JSON string OpenAI-style APIs send."""
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def tool_call(call_id: Any, name: Any, raw: Any) -> ToolCall:
    """A call as the wire sent it: raw arguments kept, decoded when they are a JSON object.

    Arguments that are neither JSON text nor an object (a list, a number) are kept
    as their JSON text, so the reviewer sees what came and the call reads as invalid.
    """
    if raw is not None and not isinstance(raw, str | dict):
        raw = json.dumps(raw, ensure_ascii=False)
    return ToolCall(
        call_id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else "",
        arguments=decode_arguments(raw),
        raw_arguments=raw,
    )


def map_stop(table: Mapping[str, Stop], finish_reason: Any, default: Stop) -> Stop:
    """Map a provider stop value through `table`; unknown values (or not even a string,
    as a broken body may hold) become "other"."""
    if finish_reason is None:
        return default
    return table.get(finish_reason, "other") if isinstance(finish_reason, str) else "other"


def one_of(value: Any, names: Collection[str]) -> bool:
    """Whether a wire value is one of `names`; a list or object where a name belongs is
    not (and is never hashed: membership in a set would raise)."""
    return isinstance(value, str) and value in names


INCOMPLETE_STREAM = "incomplete_stream"
"""The `ProviderError.type` of a stream that ended before its terminal event."""


def truncated(decision: Decision, events: int) -> ProviderError:
    """A stream that ended without its terminal event: a failure to answer, not an answer.

    Every adapter follows the same rule. A text prefix cannot be told from a turn
    that would have gone on to call a tool, and more parallel calls may have been
    lost, so nothing in it is the model's decision: it is a transport failure,
    retried like one. What had arrived is kept as `raw` for `fcreplay inspect`.
    """
    return ProviderError(
        status=200,
        type=INCOMPLETE_STREAM,
        # The count goes in `code`, so the same failure reads alike in summaries.
        code=f"after {events} events",
        message="the stream ended before its terminal event",
        retryable=True,
        raw=replace(decision, kind="invalid", stop="other", finish_reason=None),
    )


def raw_events(events: Sequence[StreamEvent]) -> list[dict[str, Any]]:
    """Stream events as the JSON-ready `raw_response` of a streamed decision."""
    return [{"event": event.event, "data": event.data} for event in events]


def payload_items(item: WireItem) -> list[Any]:
    """The history entries a WireItem holds: its payload, or each item of a list payload."""
    return list(item.payload) if isinstance(item.payload, list) else [item.payload]


def history_payload(history: Sequence[HistoryItem]) -> list[Any]:
    """History as wire items: each Message as `{"role", "content"}`, WireItems verbatim."""
    items: list[Any] = []
    for entry in history:
        if isinstance(entry, Message):
            items.append({"role": entry.role, "content": entry.content})
        else:
            items.extend(payload_items(entry))
    return items


def result_text(content: Mapping[str, Any]) -> str:
    """A tool result as the JSON text sent to providers that take strings."""
    # By the exact bytes of the content: the executor answers many calls alike, each with
    # a new dict. Equal bytes without a `null` (which may stand for NaN) are equal values.
    exact = strictjson.exact_json(content)
    if exact is None or b"null" in exact:
        return canonical_json(dict(content))
    known = _RESULT_TEXTS.get(exact)
    if known is None:
        if len(_RESULT_TEXTS) >= 4096:
            _RESULT_TEXTS.clear()
        known = _RESULT_TEXTS[exact] = canonical_json(dict(content))
    return known


_RESULT_TEXTS: dict[bytes, str] = {}


def json_text(value: Any) -> str:
    """Any value as JSON text for a message, whatever it holds."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # a circular structure
        return repr(value)


def pieces(text: str, size: int) -> list[str]:
    """`text` cut into fragments of `size` characters, as rendered streams carry it."""
    return [text[start : start + size] for start in range(0, len(text), size)]


def as_list(value: Any) -> list[Any]:
    """`value` when it is a list, else an empty one (wire fields are never trusted)."""
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def is_retryable(status: int) -> bool:
    """Whether a status is worth retrying at all (quota exhaustion is decided by body)."""
    return status in RETRYABLE_STATUS or status >= 500


_DECLARED: dict[tuple[Any, ...], tuple[tuple[ToolSpec, ...], list[dict[str, Any]]]] = {}
_DECLARED_LOCK = threading.Lock()
_DECLARED_LIMIT = 1024


def declarations(
    tools: Sequence[ToolSpec],
    strict: bool,
    build: Callable[[ToolSpec, bool], dict[str, Any]],
) -> list[dict[str, Any]]:
    """The wire declarations of `tools`, built once per tool list and shared by every
    request that declares that list.

    A suite sends the same tools in every request, and building them (schema
    transforms, copies) is the dearest part of a request. Nothing writes into a
    request body once it is built (bodies are sent, recorded, read back and
    compared), so one read-only structure serves them all; it is a JSON copy, so
    it shares nothing with the contract either. Sharing also lets comparisons
    that meet the same list again skip it (`fcreplay.engine.players`).
    """
    key = (build, strict, *map(id, tools))
    with _DECLARED_LOCK:
        hit = _DECLARED.get(key)
    # The entry holds the tools, so their ids cannot be reused while it exists.
    if hit is None or not all(map(operator.is_, hit[0], tools)):
        built = [build(tool, strict) for tool in tools]
        copied = json.loads(json.dumps(built, ensure_ascii=False))
        hit = (tuple(tools), strictjson.interned(copied))
        with _DECLARED_LOCK:
            if len(_DECLARED) >= _DECLARED_LIMIT:
                _DECLARED.clear()
            _DECLARED[key] = hit
    return hit[1]


_PLAIN: dict[tuple[str, int, int], HistoryMessage] = {}


def plain_message(where: str, index: int, position: int | None = None) -> HistoryMessage:
    """The history message `index` without calls or results, at `<where>/<position>` (by
    default its index): one object for every request's (each request re-sends them all)."""
    key = (where, index, index if position is None else position)
    message = _PLAIN.get(key)
    if message is None:
        if len(_PLAIN) >= 4096:
            _PLAIN.clear()
        message = _PLAIN[key] = HistoryMessage(index, f"{where}/{key[2]}")
    return message
