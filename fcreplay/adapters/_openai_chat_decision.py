"""Chat Completions answers read into Decisions (bodies and streams) or ProviderErrors."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._openai_errors import describe, provider_error, read_envelope
from fcreplay.adapters._wire import as_list
from fcreplay.decision import Decision, DecisionKind, ProviderError, Stop, ToolCall, Usage
from fcreplay.neutral import StreamEvent

_STOP: dict[str, Stop] = {
    "stop": "end",
    "tool_calls": "tool_call",
    "tool": "tool_call",  # old llama.cpp
    "function_call": "tool_call",  # deprecated functions API
    "length": "length",
    "model_length": "length",  # Mistral
    "content_filter": "content_filter",
}
_CUT_OFF: frozenset[Stop] = frozenset({"length", "content_filter"})

_STREAMED_TEXT = ("content", "refusal", "reasoning_content", "reasoning")
"""Delta string fields that concatenate; only `content` is visible text."""


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Read a non-streamed response body (error envelopes included)."""
    usage = _usage.openai_chat(body.get("usage") if isinstance(body, dict) else None)
    return _parse_body(status, body, usage)


def _parse_body(status: int, body: Any, usage: Usage | None) -> Decision | ProviderError:
    # The usage goes into the Decision as it is made (`_usage.with_usage` would make it twice).
    if not 200 <= status < 300 or is_error(body):
        return read_error(status, body)
    choice = _first_choice(body)
    if choice is None:
        return read_error(status, body, fallback="the response has no choices")
    message = choice.get("message")
    return _decide(
        message if isinstance(message, dict) else {},
        choice.get("finish_reason"),
        body.get("model"),
        raw=body,
        usage=usage,
    )


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Reassemble a streamed response; gives the Decision of its non-streamed twin."""
    return _parse_events(status, events, _usage.openai_chat_stream(events))


def _parse_events(
    status: int, events: Sequence[StreamEvent], usage: Usage | None
) -> Decision | ProviderError:
    raw = _wire.raw_events(events)
    if not 200 <= status < 300:
        return read_error(status, events[0].data if events else None)
    stream = _StreamedTurn()
    add = stream.add
    done = False
    for event in events:
        data = event.data
        if isinstance(data, dict):
            if event.event == "error" or is_error(data):  # Groq `event: error`, OpenAI/vLLM
                return read_error(status, data)
            add(data)
        elif isinstance(data, str) and data.strip() == "[DONE]":
            done = True
            break
        elif event.event == "error":
            return read_error(status, data)
    # `[DONE]` ends a turn too: some routers never send a finish_reason. A cut turn is
    # kept without its usage, as `_usage.with_usage` leaves the error it becomes.
    ended = done or stream.finish_reason is not None
    message, finish, model = stream.message(), stream.finish_reason, stream.model
    decision = _decide(message, finish, model, raw, usage if ended else None)
    return decision if ended else _wire.truncated(decision, len(events))


def is_error(body: Any) -> bool:
    """Whether a body (or stream chunk) is an error envelope rather than an answer."""
    return isinstance(body, dict) and (
        body.get("error") is not None
        or body.get("object") == "error"
        or ("detail" in body and "choices" not in body)
    )


def read_error(status: int, body: Any, fallback: str | None = None) -> ProviderError:
    """The ProviderError an error body (or a body that is no answer) stands for."""
    envelope = read_envelope(body)
    message = envelope.message or fallback or describe(envelope) or f"HTTP {status}"
    # In-stream errors come inside a 200; their own status (Groq `status_code`, vLLM int
    # `code`, Mistral `raw_status_code`) is the one that says what went wrong.
    if not 400 <= status < 600:
        fields = envelope.fields
        inner = (fields.get("status_code"), fields.get("code"), fields.get("raw_status_code"))
        status = next((v for v in inner if isinstance(v, int) and 400 <= v < 600), status)
    return provider_error(status, envelope.type, envelope.code, message, raw=body)


def content_text(content: Any) -> str | None:
    """The text of a message's `content`: a string, or the text of its content parts."""
    if isinstance(content, list):  # content parts, accepted in requests and by some servers
        content = "".join(
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return content if isinstance(content, str) and content else None


def _first_choice(body: Any) -> dict[str, Any] | None:
    choices = body.get("choices") if isinstance(body, dict) else None
    for choice in as_list(choices):
        # n=1 is all fcreplay asks for; other choices stay in the raw body.
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            return choice
    return None


def _decide(
    message: dict[str, Any], finish: Any, model: Any, raw: Any, usage: Usage | None = None
) -> Decision:
    finish_reason = finish if isinstance(finish, str) else None
    calls = tuple(_calls(message))
    text = content_text(message.get("content"))
    refusal = message.get("refusal")
    stop = _wire.map_stop(_STOP, finish_reason, "end")
    kind: DecisionKind = "text"
    if calls:
        broken = stop in _CUT_OFF or any(call.arguments is None for call in calls)
        kind = "invalid" if broken else "tool_call"
        stop = "tool_call" if stop == "end" else stop
    elif isinstance(refusal, str) and (refusal or text is None):
        # Compatible servers send `refusal: ""` beside a real answer: that is no refusal.
        kind, text = "refusal", refusal or None
        stop = "refusal" if stop == "end" else stop
    elif stop == "tool_call":
        kind = "invalid"
    elif stop == "content_filter" and text is None:
        kind = "refusal"
    return Decision(
        kind=kind,
        text=text,
        calls=calls,
        finish_reason=finish_reason,
        stop=stop,
        raw_response=raw,
        assistant_turn=message,
        model=model if isinstance(model, str) else None,
        usage=usage,
    )


def _calls(message: Mapping[str, Any]) -> Iterator[ToolCall]:
    for item in as_list(message.get("tool_calls")):
        # Compatible servers send `"type": ""`; custom tools and unknown item types stay
        # in the raw body.
        if not isinstance(item, dict) or (item.get("type") or "function") != "function":
            continue
        # Old llama.cpp put name and arguments on the item itself.
        function = item.get("function", item)
        if isinstance(function, dict):
            # Compatible servers send "" for a missing id; it cannot be answered by id.
            call_id = item.get("id") or None
            yield _wire.tool_call(call_id, function.get("name"), function.get("arguments"))
    legacy = message.get("function_call")
    # Compatible servers send an empty `function_call` beside a plain answer: no call.
    if isinstance(legacy, dict) and (legacy.get("name") or legacy.get("arguments")):
        yield _wire.tool_call(None, legacy.get("name"), legacy.get("arguments"))


class _StreamedTurn:
    """Accumulates choice 0 of a stream into the message a non-streamed body would hold."""

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}
        self.calls: list[dict[str, Any]] = []
        self.by_index: dict[int, dict[str, Any]] = {}
        self.function_call: dict[str, Any] | None = None
        self.finish_reason: str | None = None
        self.model: str | None = None

    def add(self, chunk: Mapping[str, Any]) -> None:
        if self.model is None and isinstance(chunk.get("model"), str):
            self.model = chunk["model"]
        choices = chunk.get("choices")  # [] in the usage chunk
        if not isinstance(choices, list):
            return
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if delta and isinstance(delta, dict):  # the last chunk's is empty
                if len(delta) == 1 and isinstance(text := delta.get("content"), str):
                    # Most chunks of a text answer: `_delta`'s reading of them, short.
                    self.texts.setdefault("content", []).append(text)
                else:
                    self._delta(delta)
            finish_reason = choice.get("finish_reason")
            if isinstance(finish_reason, str):
                self.finish_reason = finish_reason

    def _delta(self, delta: Mapping[str, Any]) -> None:
        for key in _STREAMED_TEXT:
            # A delta holds one or two of these keys: most lookups find nothing.
            if key in delta and isinstance(text := delta[key], str):
                self.texts.setdefault(key, []).append(text)
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for item in tool_calls:
                if isinstance(item, dict):
                    self._tool_call(item)
        function_call = delta.get("function_call")
        if isinstance(function_call, dict):
            self.function_call = self.function_call or {}
            _merge_function(self.function_call, function_call)

    def _tool_call(self, item: Mapping[str, Any]) -> None:
        index = item.get("index")
        function = item.get("function", item)  # old llama.cpp: name and arguments on the item
        fragment = function if isinstance(function, dict) else {}
        if isinstance(index, int) and index in self.by_index:
            call = self.by_index[index]
        elif isinstance(index, int) or item.get("id") or "name" in fragment or not self.calls:
            # A new call; without an index (Mistral) it arrives whole in this delta.
            call = {}
            self.calls.append(call)
            if isinstance(index, int):
                self.by_index[index] = call
        else:
            call = self.calls[-1]
        # Later fragments of some compatible servers repeat `id` and `type` as "": they
        # must not overwrite the values the first fragment gave.
        if item.get("id") or ("id" not in call and "id" in item):
            call["id"] = item["id"]
        kind = item.get("type")
        call["type"] = kind if isinstance(kind, str) and kind else call.get("type", "function")
        _merge_function(call.setdefault("function", {}), fragment)

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        message.update({key: "".join(parts) for key, parts in self.texts.items()})
        if self.calls:
            message["tool_calls"] = self.calls
        if self.function_call is not None:
            message["function_call"] = self.function_call
        return message


def _merge_function(target: dict[str, Any], fragment: Mapping[str, Any]) -> None:
    name, known = fragment.get("name"), target.get("name", "")
    # OpenAI sends the name once; some routers (OpenRouter) repeat it whole in every
    # fragment, and a server that splits it would need the pieces joined.
    if isinstance(name, str) and name != known:
        target["name"] = known + name
    if "arguments" in fragment:
        arguments = fragment["arguments"]
        if isinstance(arguments, str) and isinstance(target.get("arguments"), str):
            target["arguments"] += arguments
        else:
            target["arguments"] = arguments  # first fragment, or a whole object
