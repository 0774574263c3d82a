"""Cassettes on disk: read any vcrpy cassette, and write and read fcreplay's own JSON format.

This is the only module that imports vcrpy. Everything it returns is an
fcreplay dataclass: bodies decoded (gzip, base64, `!!binary`), JSON parsed,
streams split into events, whatever style the recording project used.

fcreplay's own format is JSON with bodies stored decoded and readable:

    {"version": 1,
     "fcreplay": {"format": 1, "target": ..., "adapter": ..., "variant": ...,
                  "case_id": ..., "fcreplay_version": ...},
     "interactions": [{"request": {..., "parsed_body": {...}},
                       "response": {..., "parsed_body" | "sse" | "body": ...}}]}
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import os
import tempfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from . import __version__
from .errors import InputError
from .exchange import StreamEvent
from .sse import format_sse, parse_sse

CASSETTE_VERSION = 1
"""vcrpy's cassette format version, which fcreplay cassettes also declare."""
FORMAT = 1
"""Version of the `fcreplay` block and of the body layout under it."""
SERIALIZER_NAME = "fcreplay"
"""Name under which `SERIALIZER` is registered with vcrpy."""

_DERIVED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Response headers that describe the bytes on the wire; fcreplay stores the body decoded
and re-encodes it on replay, so keeping them would make clients decode it a second time."""
_GZIP_MAGIC = b"\x1f\x8b"
_BASE64_GZIP_PREFIX = "H4sI"
"""What gzip bytes look like once base64-encoded (projects that store binary in JSON)."""
_SSE_FIELDS = ("data:", "event:", "id:", "retry:", ":")


@dataclass(frozen=True)
class RecordedRequest:
    """A recorded HTTP request, its body decoded."""

    method: str
    uri: str
    headers: dict[str, str]
    """Lower-case names, first value of each."""
    body: Any
    """Parsed JSON, or the text when it is not JSON, or None when there is none."""


@dataclass(frozen=True)
class RecordedResponse:
    """A recorded HTTP response, its body decoded and a stream split into events."""

    status: int
    headers: dict[str, str]
    """Lower-case names, first value of each."""
    body: Any
    """Parsed JSON, text, bytes that are not text (binary protocols), or None for streams."""
    events: tuple[StreamEvent, ...] | None = None
    """SSE events (or the elements of Gemini's JSON-array stream); None when not a stream."""


@dataclass(frozen=True)
class Interaction:
    """One request and the response it got."""

    request: RecordedRequest
    response: RecordedResponse
    label: dict[str, Any] | None = None
    """fcreplay's tag for the interaction in its run (attempt, step); None in other tools'
    cassettes. Stored beside the request and response; vcrpy ignores it."""


@dataclass(frozen=True)
class UnreadableInteraction:
    """An interaction of a cassette that could not be decoded; the others still can."""

    index: int
    """0-based position in the cassette."""
    reason: str


@dataclass(frozen=True)
class CassetteMeta:
    """Where an fcreplay cassette comes from: which target, variant and case."""

    target: str
    adapter: str
    variant: str
    case_id: str
    fcreplay_version: str = __version__

    def to_json(self) -> dict[str, Any]:
        """Return the `fcreplay` block of the cassette."""
        return {
            "format": FORMAT,
            "target": self.target,
            "adapter": self.adapter,
            "variant": self.variant,
            "case_id": self.case_id,
            "fcreplay_version": self.fcreplay_version,
        }


@dataclass(frozen=True)
class Cassette:
    """A cassette as read: its interactions, and its fcreplay block when it has one."""

    path: Path
    meta: CassetteMeta | None
    """None for cassettes written by other tools."""
    interactions: list[Interaction | UnreadableInteraction]


# --- reading ---------------------------------------------------------------------------


def read_interactions(path: str | Path) -> list[Interaction | UnreadableInteraction]:
    """Read the interactions of any vcrpy cassette (YAML or JSON), in file order.

    Raises InputError when the file cannot be opened or is not a cassette at all;
    a single interaction that cannot be decoded becomes an UnreadableInteraction.
    """
    return load_cassette(path).interactions


def load_cassette(path: str | Path) -> Cassette:
    """Read a cassette with its fcreplay block (see `read_interactions`)."""
    document = _load_document(path)
    if isinstance(document, list):
        items: Any = document  # vcrpy < 1.0 wrote a bare list of interactions
    elif isinstance(document, dict):
        items = document.get("interactions")
    else:
        items = None
    if not isinstance(items, list):
        raise InputError.at(path, None, "not a vcrpy cassette: no 'interactions' list")
    block = document.get("fcreplay") if isinstance(document, dict) else None
    own = block is not None
    meta = _read_meta(path, block) if own else None
    interactions = [_read_interaction(index, item, own=own) for index, item in enumerate(items)]
    return Cassette(Path(path), meta, interactions)


def _load_document(path: str | Path) -> Any:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InputError.at(path, None, f"cannot read cassette: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError.at(path, None, f"not a text cassette (not UTF-8: {exc.reason})") from None
    if text.lstrip()[:1] not in ("{", "["):
        return _load_yaml(path, text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        json_error = exc
    try:
        return _load_yaml(path, text)  # flow-style YAML also starts with a brace
    except InputError:
        message = f"not a readable cassette: invalid JSON: {json_error.msg}"
        raise InputError.at(path, json_error.lineno, message) from None


def _load_yaml(path: str | Path, text: str) -> Any:
    # vcrpy's own loader: safe, but it also rebuilds the benign Python tags that
    # old cassettes hold (tuples, BytesIO request bodies).
    import yaml
    from vcr.serializers import yamlserializer

    try:
        return yamlserializer.deserialize(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "malformed YAML"
        raise InputError.at(path, line, f"not a readable cassette: {problem}") from None
    except yaml.YAMLError as exc:
        raise InputError.at(path, None, f"not a readable cassette: {exc}") from None


def _read_meta(path: str | Path, block: Any) -> CassetteMeta:
    if not isinstance(block, dict):
        raise InputError.at(path, None, "the 'fcreplay' block must be an object")
    if block.get("format") != FORMAT:
        raise InputError.at(
            path,
            None,
            f"fcreplay cassette format {block.get('format')!r}; this fcreplay reads format "
            f"{FORMAT}: upgrade fcreplay or re-record the cassette",
        )
    return CassetteMeta(
        target=str(block.get("target", "")),
        adapter=str(block.get("adapter", "")),
        variant=str(block.get("variant", "")),
        case_id=str(block.get("case_id", "")),
        fcreplay_version=str(block.get("fcreplay_version", "")),
    )


def _read_interaction(index: int, item: Any, *, own: bool) -> Interaction | UnreadableInteraction:
    try:
        request = item["request"]
        response = item["response"]
        uri = str(request["uri"])
        recorded = RecordedRequest(
            method=str(request.get("method", "")).upper(),
            uri=uri,
            headers=_headers(request.get("headers")),
            body=_request_body(request),
        )
        label = item.get("label") if own else None
        return Interaction(
            recorded,
            _response(response, uri, own=own),
            label if isinstance(label, dict) else None,
        )
    except _Unreadable as exc:
        return UnreadableInteraction(index, str(exc))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return UnreadableInteraction(index, f"unexpected interaction shape: {_describe(exc)}")


class _Unreadable(Exception):
    """An interaction's body cannot be decoded."""


def _describe(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing key {exc.args[0]!r}"
    return f"{type(exc).__name__}: {exc}"


def _headers(value: Any) -> dict[str, str]:
    if not value:
        return {}
    headers: dict[str, str] = {}
    for name, values in value.items():
        if isinstance(values, list | tuple):
            if not values:
                continue
            values = values[0]
        headers.setdefault(str(name).lower(), str(values))
    return headers


def _request_body(request: Mapping[str, Any]) -> Any:
    if "parsed_body" in request:
        return request["parsed_body"]
    raw = _unwrap(request.get("body"))
    if raw is None:
        return None
    if isinstance(raw, bytes):
        raw = _decompress(raw, _headers(request.get("headers")).get("content-encoding"))
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw
    if raw == "":
        return None
    return _json_or_text(raw)


def _unwrap(body: Any) -> str | bytes | None:
    """The body's content from the shapes recording tools use for it."""
    if isinstance(body, dict):
        if "string" in body:
            return _unwrap(body["string"])
        for key in ("base64_string", "base64"):
            if key in body:
                try:
                    return base64.b64decode(body[key], validate=True)
                except (binascii.Error, ValueError, TypeError):
                    raise _Unreadable(f"body {key} is not valid base64") from None
        raise _Unreadable(f"unknown body shape with keys {sorted(body)}")
    if body is None or isinstance(body, str | bytes):
        return body
    if isinstance(body, bytearray):
        return bytes(body)
    read = getattr(body, "read", None)  # BytesIO request bodies of old cassettes
    if callable(read):
        content = read()
        if isinstance(content, str | bytes):
            return content
    raise _Unreadable(f"unknown body type {type(body).__name__}")


def _decompress(raw: bytes, encoding: str | None) -> bytes:
    encoding = (encoding or "").strip().lower()
    # Some tools store the body already decoded but keep the header, so trust the bytes.
    if raw.startswith(_GZIP_MAGIC) and encoding in ("", "gzip", "x-gzip"):
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise _Unreadable(f"corrupt gzip body: {exc}") from None
    if encoding == "deflate":
        for wbits in (zlib.MAX_WBITS, -zlib.MAX_WBITS):
            try:
                return zlib.decompress(raw, wbits)
            except zlib.error:
                continue
    if encoding in ("br", "zstd") and not _is_text(raw):
        raise _Unreadable(f"{encoding}-compressed body: fcreplay cannot decode it")
    return raw


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _response(response: Mapping[str, Any], uri: str, *, own: bool) -> RecordedResponse:
    status = response["status"]
    code = int(status["code"] if isinstance(status, dict) else status)
    headers = _headers(response.get("headers"))
    body: Any = None
    events: tuple[StreamEvent, ...] | None = None
    if "sse" in response:
        events = tuple(
            StreamEvent(event.get("event"), event.get("data")) for event in response["sse"]
        )
    elif "parsed_body" in response:
        body = response["parsed_body"]
        if isinstance(body, list) and is_json_array_stream(uri):
            events, body = _array_events(body), None
    else:
        raw = _unwrap(response.get("body"))
        if isinstance(raw, bytes):
            raw = _decompress(raw, headers.get("content-encoding"))
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                return RecordedResponse(code, headers, raw)  # a binary protocol, kept as is
        if raw is not None and raw != "":
            body, events = (raw, None) if own else _interpret(raw, headers, uri)
    return RecordedResponse(code, headers, body, events)


def _interpret(text: str, headers: Mapping[str, str], uri: str) -> tuple[Any, Any]:
    """Return (body, events) for a response text recorded by another tool."""
    content_type = headers.get("content-type", "").lower()
    if "text/event-stream" in content_type:
        events = parse_sse(text)
        if events:
            return None, tuple(events)
    value = _json_or_text(text)
    if value is not text:
        if isinstance(value, list) and is_json_array_stream(uri):
            return None, _array_events(value)
        return value, None
    if _looks_like_sse(text):
        return None, tuple(parse_sse(text))
    if text.startswith(_BASE64_GZIP_PREFIX):
        try:
            unpacked = gzip.decompress(base64.b64decode(text, validate=True)).decode("utf-8")
        except (binascii.Error, ValueError, OSError, EOFError, zlib.error):
            return text, None
        return _interpret(unpacked, headers, uri)
    return text, None


def _looks_like_sse(text: str) -> bool:
    first = text.lstrip("\ufeff\r\n")
    return first.startswith(_SSE_FIELDS)


def _array_events(elements: list[Any]) -> tuple[StreamEvent, ...]:
    return tuple(StreamEvent(None, element) for element in elements)


def is_json_array_stream(uri: str) -> bool:
    """Whether a URL asks Gemini for its JSON-array stream (streaming without `alt=sse`)."""
    parts = urlsplit(uri)
    if ":streamGenerateContent" not in parts.path:
        return False
    return ("alt", "sse") not in parse_qsl(parts.query)


# --- writing ---------------------------------------------------------------------------


def write_cassette(
    path: str | Path,
    interactions: Iterable[Interaction],
    meta: CassetteMeta,
) -> Path:
    """Write interactions as an fcreplay cassette, atomically; return the path.

    Parent folders are created; see `write_text_atomically`.
    """
    target = Path(path)
    write_text_atomically(target, cassette_text(interactions, meta))
    return target


def cassette_text(interactions: Iterable[Interaction], meta: CassetteMeta) -> str:
    """The text `write_cassette` writes: indented JSON, non-ASCII kept readable.

    Raises ValueError for a value JSON cannot carry (NaN, infinity).
    """
    document = {
        "version": CASSETTE_VERSION,
        "fcreplay": meta.to_json(),
        "interactions": [interaction_json(interaction) for interaction in interactions],
    }
    return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


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
        "status": {"code": response.status, "message": _reason(response.status)},
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


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write a file so that a reader never sees it half-written, creating parent folders.

    The text goes to a temporary file in the same folder, is synced, then renamed
    over the target; on failure the old file (if any) is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    # Makes the rename itself durable; not possible on every platform.
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


# --- vcrpy serializer ------------------------------------------------------------------


class VcrSerializer:
    """Converts between fcreplay's cassette format and vcrpy's in-memory cassette dict.

    Register it to let vcrpy itself replay (or record) fcreplay cassettes:
    `vcr.VCR().register_serializer("fcreplay", SERIALIZER)`.
    """

    def __init__(self, meta: CassetteMeta | None = None) -> None:
        self.meta = meta
        """The fcreplay block written by `serialize`; a placeholder one when None."""

    def serialize(self, cassette_dict: dict[str, Any]) -> str:
        """vcrpy dict (string bodies) -> fcreplay cassette text."""
        interactions = []
        for index, item in enumerate(cassette_dict.get("interactions", [])):
            interaction = _read_interaction(index, item, own=False)
            if isinstance(interaction, UnreadableInteraction):
                raise ValueError(f"cannot store interaction {index}: {interaction.reason}")
            interactions.append(interaction)
        meta = self.meta or CassetteMeta(target="", adapter="", variant="", case_id="")
        return cassette_text(interactions, meta)

    def deserialize(self, cassette_string: str) -> dict[str, Any]:
        """fcreplay cassette text -> vcrpy dict (plain vcrpy JSON passes through)."""
        document = json.loads(cassette_string)
        if not isinstance(document, dict):
            raise ValueError("not a cassette: the JSON document is not an object")
        if "fcreplay" not in document:
            return document
        interactions = []
        for index, item in enumerate(document.get("interactions", [])):
            interaction = _read_interaction(index, item, own=True)
            if isinstance(interaction, UnreadableInteraction):
                raise ValueError(f"cannot replay interaction {index}: {interaction.reason}")
            interactions.append(_vcr_interaction(interaction))
        return {"version": CASSETTE_VERSION, "interactions": interactions}


def _vcr_interaction(interaction: Interaction) -> dict[str, Any]:
    request, response = interaction.request, interaction.response
    return {
        "request": {
            "method": request.method,
            "uri": request.uri,
            "headers": {name: [value] for name, value in request.headers.items()},
            "body": _wire_text(request.body),
        },
        "response": {
            "status": {"code": response.status, "message": _reason(response.status)},
            "headers": {name: [value] for name, value in response.headers.items()},
            "body": {"string": _wire_text(_wire_body(request.uri, response)) or ""},
        },
    }


def _wire_body(uri: str, response: RecordedResponse) -> Any:
    if response.events is None:
        return response.body
    if is_json_array_stream(uri) and all(event.event is None for event in response.events):
        return [event.data for event in response.events]
    return format_sse(response.events)


def _wire_text(body: Any) -> str | bytes | None:
    if body is None or isinstance(body, str | bytes):
        return body
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


SERIALIZER = VcrSerializer()
"""The vcrpy serializer for fcreplay cassettes (placeholder fcreplay block on write)."""
