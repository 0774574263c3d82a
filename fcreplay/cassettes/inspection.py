"""Normalized decisions of recorded interactions, for `fcreplay inspect`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fcreplay.adapters.registry import api_for_url, get_adapter
from fcreplay.cassettes.store import Interaction, UnreadableInteraction, read_interactions
from fcreplay.decision import Decision, ProviderError, ToolCall

OTHER = "other"
"""The `api` of an interaction that no adapter speaks (Bedrock, Cohere, Ollama native...)."""
CASSETTE_SUFFIXES = (".yaml", ".yml", ".json")
"""Files taken from a folder given to `inspect`."""

Record = dict[str, Any]
"""One JSON-ready line of `fcreplay inspect --format json`."""


def api_of(uri: str) -> str:
    """The adapter name for a request URL, or "other"."""
    return api_for_url(uri) or OTHER


def is_stream(interaction: Interaction) -> bool:
    """Whether the request asked for a stream or the response came as one."""
    body, uri = interaction.request.body, interaction.request.uri
    api = api_for_url(uri)
    return (
        (isinstance(body, dict) and body.get("stream") is True)
        or (api is not None and get_adapter(api).CAPABILITIES.streams_by_url(uri))
        or interaction.response.events is not None
    )


def inspect_interaction(
    file: str, index: int, interaction: Interaction | UnreadableInteraction
) -> Record:
    """Return the inspect record of one interaction; never raises for a bad interaction."""
    if isinstance(interaction, UnreadableInteraction):
        return _record(file, index, OTHER, None, False, error=_unreadable(interaction.reason))
    request, response = interaction.request, interaction.response
    api = api_of(request.uri)
    stream = is_stream(interaction)
    if api == OTHER:
        return _record(file, index, api, response.status, stream)
    try:
        outcome = parse_response(api, interaction)
    except Exception as exc:  # an adapter bug must not hide the rest of the file
        message = f"{api} adapter failed: {type(exc).__name__}: {exc}"
        return _record(file, index, api, response.status, stream, error=_unreadable(message))
    if isinstance(outcome, ProviderError):
        return _record(file, index, api, response.status, stream, error=outcome.to_json())
    return _record(file, index, api, response.status, stream, decision=decision_json(outcome))


def parse_response(api: str, interaction: Interaction) -> Decision | ProviderError:
    """The decision (or provider error) of a recorded response, read by the adapter `api`."""
    adapter = get_adapter(api)
    response = interaction.response
    if response.events is not None and 200 <= response.status < 300:
        return adapter.parse_stream(response.status, list(response.events))
    body = response.body
    if body is None and response.events is not None:
        # An error status with a stream body: give the adapter what came, as a list.
        body = [{"event": event.event, "data": event.data} for event in response.events]
    return adapter.parse_decision(response.status, body)


def decision_json(decision: Decision) -> dict[str, Any]:
    """The normalized fields `inspect` shows for a decision."""
    return {
        "kind": decision.kind,
        "text": decision.text,
        "finish_reason": decision.finish_reason,
        "calls": [call.to_json() for call in decision.calls],
    }


def _unreadable(message: str) -> dict[str, Any]:
    return {"type": "unreadable", "message": message}


def _record(
    file: str,
    index: int,
    api: str,
    status: int | None,
    stream: bool,
    *,
    decision: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
) -> Record:
    return {
        "file": file,
        "index": index,
        "api": api,
        "status": status,
        "stream": stream,
        "decision": decision,
        "error": error,
    }


def inspect_file(file: str) -> list[Record]:
    """Return the records of every interaction of a cassette, in file order.

    Raises InputError when the file cannot be opened or is not a cassette.
    """
    return [
        inspect_interaction(file, index, interaction)
        for index, interaction in enumerate(read_interactions(file))
    ]


def expand_paths(paths: list[str]) -> Iterator[str]:
    """The paths as given, with each folder replaced by the cassette files under it."""
    for path in paths:
        folder = Path(path)
        if folder.is_dir():
            found = (
                str(child)
                for child in folder.rglob("*")
                if child.suffix.lower() in CASSETTE_SUFFIXES and child.is_file()
            )
            yield from sorted(found)
        else:
            yield path


# --- text rendering --------------------------------------------------------------------

_ARGUMENTS_WIDTH = 120
_TEXT_WIDTH = 80


def render_text(record: Record) -> str:
    """One readable line for a record, e.g. `f.yaml#0 <api> 200 stream tool_call f({})`."""
    head = f"{record['file']}#{record['index']}"
    error = record["error"]
    if error is not None and error.get("type") == "unreadable":
        return f"{head} {record['api']} unreadable: {error['message']}"
    parts = [head, record["api"], str(record["status"])]
    if record["stream"]:
        parts.append("stream")
    if error is not None:
        parts.append(_render_error(error))
    elif record["decision"] is not None:
        parts.append(_render_decision(record["decision"]))
    else:
        parts.append("(not a model call fcreplay reads)")
    return " ".join(parts)


def _render_error(error: dict[str, Any]) -> str:
    kind = "/".join(str(part) for part in (error.get("type"), error.get("code")) if part)
    retry = " (retryable)" if error.get("retryable") else ""
    return f"error {kind or '-'}: {_clip(str(error.get('message', '')), _TEXT_WIDTH)}{retry}"


def _render_decision(decision: dict[str, Any]) -> str:
    parts = [decision["kind"]]
    calls = [_render_call(ToolCall.from_json(call)) for call in decision["calls"]]
    if calls:
        parts.append(", ".join(calls))
    if decision["text"]:
        parts.append(json.dumps(_clip(decision["text"], _TEXT_WIDTH), ensure_ascii=False))
    parts.append(f"[{decision['finish_reason']}]")
    return " ".join(parts)


def _render_call(call: ToolCall) -> str:
    if call.arguments is not None:
        arguments = _compact(call.arguments)
    elif isinstance(call.raw_arguments, str):
        arguments = call.raw_arguments  # not JSON: shown as the model sent it
    else:
        arguments = _compact(call.raw_arguments)
    return f"{call.name}({_clip(arguments, _ARGUMENTS_WIDTH)})"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
