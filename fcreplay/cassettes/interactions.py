"""Recorded interactions: their dataclasses, read from any recorder's layout or written in ours."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from fcreplay.cassettes.bodies import (
    UnreadableBody,
    is_json_array_stream,
    read_headers,
    request_body,
    response_body,
)
from fcreplay.limits import DEFAULT_LIMITS, Limits
from fcreplay.neutral import StreamEvent, WireResponse
from fcreplay.quickinit import quick

_DERIVED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Response headers that describe the bytes on the wire; fcreplay stores the body decoded
and re-encodes it on replay, so keeping them would make clients decode it a second time."""


@quick
@dataclass(frozen=True)
class RecordedRequest:
    """A recorded HTTP request, its body decoded."""

    method: str
    uri: str
    headers: dict[str, str]
    """Lower-case names, first value of each."""
    body: Any
    """Parsed JSON, or the text when it is not JSON, or None when there is none."""


@quick
@dataclass(frozen=True)
class Interaction:
    """One request and the response it got."""

    request: RecordedRequest
    response: WireResponse
    label: dict[str, Any] | None = None
    """fcreplay's tag for the interaction in its run (attempt, step); None in other tools'
    cassettes. Stored beside the request and response; vcrpy ignores it."""


@dataclass(frozen=True)
class UnreadableInteraction:
    """An interaction of a cassette that could not be decoded; the others still can."""

    index: int
    """0-based position in the cassette."""
    reason: str


def read_interaction(
    index: int, item: Any, *, own: bool, limits: Limits = DEFAULT_LIMITS
) -> Interaction | UnreadableInteraction:
    """Decode the `index`-th interaction of a cassette; `own`: in fcreplay's layout.

    A body past a limit raises BodyLimitError: the file is refused as a whole.
    """
    try:
        request = item["request"]
        response = item["response"]
        uri = str(request["uri"])
        recorded = RecordedRequest(
            method=str(request.get("method", "")).upper(),
            uri=uri,
            headers=read_headers(request.get("headers")),
            body=request_body(request, limits),
        )
        label = item.get("label") if own else None
        return Interaction(
            recorded,
            _response(response, uri, own=own, limits=limits),
            label if isinstance(label, dict) else None,
        )
    except UnreadableBody as exc:
        return UnreadableInteraction(index, str(exc))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return UnreadableInteraction(index, f"unexpected interaction shape: {_describe(exc)}")


def read_own(
    index: int, item: Any, limits: Limits = DEFAULT_LIMITS
) -> Interaction | UnreadableInteraction:
    """`read_interaction(index, item, own=True)`, quicker for the shapes fcreplay writes
    (every interaction of a replay): any other shape is read by `read_interaction`."""
    if type(item) is not dict:
        return read_interaction(index, item, own=True, limits=limits)
    request, response = item.get("request"), item.get("response")
    if type(request) is not dict or type(response) is not dict:
        return read_interaction(index, item, own=True, limits=limits)
    uri, method, status = request.get("uri"), request.get("method", ""), response.get("status")
    code = status.get("code") if type(status) is dict else None
    request_headers = _own_headers(request.get("headers"))
    response_headers = _own_headers(response.get("headers"))
    if (
        type(uri) is not str
        or type(method) is not str
        or type(code) is not int
        or not 100 <= code <= 599
        or request_headers is None
        or response_headers is None
        or "parsed_body" not in request
    ):
        return read_interaction(index, item, own=True, limits=limits)
    if type(events := response.get("sse")) is list:
        body, made = None, []
        for event in events:
            if type(event) is not dict:
                return read_interaction(index, item, own=True, limits=limits)
            made.append(StreamEvent(event.get("event"), event.get("data")))
        stream: tuple[StreamEvent, ...] | None = tuple(made)
    elif "sse" not in response and type(body := response.get("parsed_body")) is dict:
        stream = None
    else:
        return read_interaction(index, item, own=True, limits=limits)
    label = item.get("label")
    return Interaction(
        RecordedRequest(
            method=method.upper(), uri=uri, headers=request_headers, body=request["parsed_body"]
        ),
        WireResponse(code, response_headers, body, stream),
        label if isinstance(label, dict) else None,
    )


def _own_headers(value: Any) -> dict[str, str] | None:
    """`read_headers` of headers as fcreplay writes them (each name with a list holding
    its text), or None for any other shape.

    The same headers come back in interaction after interaction (a target's responses,
    a unit's requests but for the attempt's number): the last few read are kept with
    their names as the key, and headers equal to one of them read as a copy of its
    reading (a copy: no two interactions share a dictionary).
    """
    if type(value) is not dict:
        return None if value else {}
    names = tuple(value)
    known = _HEADERS.get(names)
    if known is not None:
        for raw, read in known:
            if raw == value:
                return dict(read)
    found = _read_own_headers(value)
    if found is not None:
        if known is None:
            if len(_HEADERS) >= _HEADER_NAMES:
                _HEADERS.clear()
            known = _HEADERS[names] = []
        elif len(known) >= _HEADER_VALUES:
            del known[0]
        known.append((value, dict(found)))
    return found


_HEADERS: dict[tuple[Any, ...], list[tuple[dict[Any, Any], dict[str, str]]]] = {}
"""Headers as recorded and as read, by their names: the last `_HEADER_VALUES` of each."""
_HEADER_NAMES = 64
_HEADER_VALUES = 4


def _read_own_headers(value: dict[Any, Any]) -> dict[str, str] | None:
    found: dict[str, str] = {}
    for name, values in value.items():
        if type(values) is not list or not values or type(text := values[0]) is not str:
            return None
        if type(name) is not str:
            return None
        key = name.lower()
        if key not in found:
            found[key] = text
    return found


def _describe(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing key {exc.args[0]!r}"
    return f"{type(exc).__name__}: {exc}"


def _response(response: Mapping[str, Any], uri: str, *, own: bool, limits: Limits) -> WireResponse:
    status = response["status"]
    code = _status_code(status["code"] if isinstance(status, dict) else status)
    headers = read_headers(response.get("headers"))
    body, events = response_body(response, headers, uri, own=own, limits=limits)
    return WireResponse(code, headers, body, events)


def _status_code(value: Any) -> int:
    # A whole number from 100 to 599, or its digits as text; `.inf`, 200.5 or true are not.
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 100 <= value <= 599:
        raise UnreadableBody(f"status {value!r} is not an HTTP status code (100 to 599)")
    return value


def interaction_json(interaction: Interaction) -> dict[str, Any]:
    """Return an interaction in fcreplay's cassette layout (bodies decoded, JSON parsed)."""
    request, response = interaction.request, interaction.response
    request_json: dict[str, Any] = {
        "method": request.method,
        "uri": request.uri,
        "headers": {name: [value] for name, value in request.headers.items()},
    }
    request_json.update(_body_json(request.body))
    response_json: dict[str, Any] = {
        "status": {"code": response.status, "message": status_phrase(response.status)},
        "headers": {
            name: [value]
            for name, value in response.headers.items()
            if name not in _DERIVED_HEADERS
        },
    }
    if response.events is not None:
        if is_json_array_stream(request.uri) and all(e.event is None for e in response.events):
            response_json["parsed_body"] = [event.data for event in response.events]
        else:
            response_json["sse"] = [
                {"event": event.event, "data": event.data} for event in response.events
            ]
    else:
        response_json.update(_body_json(response.body))
    document = {"request": request_json, "response": response_json}
    if interaction.label is not None:
        document["label"] = interaction.label
    return document


def _body_json(body: Any) -> dict[str, Any]:
    if body is None:
        return {}
    if isinstance(body, bytes):
        return {"body": {"base64_string": base64.b64encode(body).decode("ascii")}}
    if isinstance(body, str):
        return {"body": {"string": body}}
    return {"parsed_body": body}


def status_phrase(status: int) -> str:
    """The reason phrase of an HTTP status ("" for a code it does not know)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
