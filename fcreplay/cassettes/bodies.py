"""Decoding what recorders store: header lists, body wrappers, encodings and stream forms.

Cassettes written by other tools hold bodies as strings, `{"string": ...}`,
`{"type": ..., "content": ...}` (pydantic-ai since 2026), base64 (`base64_string`),
gzip or deflate bytes (sometimes base64-encoded inside JSON), SSE text, or a
JSON-array stream (when the request URL's adapter says its format streams that
way); each is decoded here to parsed JSON, text, bytes or
stream events. Pure functions: no file access, no vcrpy.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Mapping
from typing import Any

from fcreplay.adapters.registry import api_for_url, get_adapter
from fcreplay.cassettes import eventstream
from fcreplay.cassettes.framing import decode_ndjson, framing_of, looks_like_ndjson
from fcreplay.cassettes.sse import decode_data, parse_sse
from fcreplay.limits import DEFAULT_LIMITS, MIB, Limits
from fcreplay.neutral import StreamEvent, StreamFraming

_GZIP_MAGIC = b"\x1f\x8b"
_BASE64_GZIP_PREFIX = "H4sI"
"""What gzip bytes look like once base64-encoded (projects that store binary in JSON)."""
_SSE_FIELDS = ("data:", "event:", "id:", "retry:", ":")


class UnreadableBody(Exception):
    """A recorded body cannot be decoded."""


class BodyLimitError(Exception):
    """A recorded body would decode past a limit; the whole file is refused, not read on."""


_RATIO_FLOOR = 1 * MIB
"""Below this decoded size the ratio is not checked: small bodies compress extremely."""
_CHUNK = 256 * 1024


def read_headers(value: Any) -> dict[str, str]:
    """Recorded headers as lower-case names, first value of each."""
    if not value:
        return {}
    found: dict[str, str] = {}
    for name, values in value.items():
        # Every cassette's headers: a name and a list of one string, nearly always.
        if type(values) is list or isinstance(values, list | tuple):
            if not values:
                continue
            values = values[0]
        key = name.lower() if type(name) is str else str(name).lower()
        if key not in found:
            found[key] = values if type(values) is str else str(values)
    return found


_TYPED_KEYS = frozenset({"type", "content"})
_JSON_TYPES = frozenset({"json", "application/json"})
_TEXT_TYPES = frozenset({"text", "string", "sse", "event-stream", "text/event-stream"})
_BASE64_TYPES = frozenset({"base64", "binary", "bytes"})


def typed(body: Any) -> tuple[bool, Any]:
    """`(True, value)` for a body stored as `{type, content}` (pydantic-ai's 2026 layout):
    parsed JSON, text, or decoded bytes; `(False, body)` for any other shape."""
    if not isinstance(body, dict) or set(body) != _TYPED_KEYS or not isinstance(body["type"], str):
        return False, body
    kind, content = body["type"].lower(), body["content"]
    if content is None or kind in ("empty", "none"):
        return True, None
    if kind in _JSON_TYPES:
        return True, decode_data(content) if isinstance(content, str) else content
    if kind in _TEXT_TYPES and isinstance(content, str):
        return True, content
    if kind in _BASE64_TYPES and isinstance(content, str):
        try:
            return True, base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise UnreadableBody(f"body of type {kind!r} is not valid base64") from None
    raise UnreadableBody(f"unknown body type {body['type']!r} (with {type(content).__name__})")


def request_body(request: Mapping[str, Any], limits: Limits = DEFAULT_LIMITS) -> Any:
    """A recorded request's body: parsed JSON, text, bytes that are not text, or None."""
    if "parsed_body" in request:
        return request["parsed_body"]
    found, value = typed(request.get("body"))
    if found and not isinstance(value, str | bytes):
        return value
    raw = unwrap(value)
    if raw is None:
        return None
    if isinstance(raw, bytes):
        encoding = read_headers(request.get("headers")).get("content-encoding")
        raw = decompress(raw, encoding, limits)
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw
    if raw == "":
        return None
    return decode_data(raw, limits.max_json_depth)


def response_body(
    response: Mapping[str, Any],
    headers: Mapping[str, str],
    uri: str,
    *,
    own: bool,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Any, tuple[StreamEvent, ...] | None]:
    """A recorded response's (body, events); `own`: fcreplay's layout, text kept as text."""
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
        found, value = typed(response.get("body"))
        if found and not isinstance(value, str | bytes | None):
            if isinstance(value, list) and is_json_array_stream(uri):
                return None, _array_events(value)
            return value, None
        raw = unwrap(value)
        if isinstance(raw, bytes):
            raw = decompress(raw, headers.get("content-encoding"), limits)
            if stream_framing(uri) == "aws-eventstream" and eventstream.looks_like(raw):
                return None, tuple(eventstream.decode(raw))
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                return raw, None  # a binary protocol, kept as is
        if raw is not None and raw != "":
            body, events = (raw, None) if own else interpret(raw, headers, uri, limits)
    return body, events


def unwrap(body: Any) -> str | bytes | None:
    """The body's content from the shapes recording tools use for it."""
    if isinstance(body, dict):
        if "string" in body:
            return unwrap(body["string"])
        for key in ("base64_string", "base64"):
            if key in body:
                try:
                    return base64.b64decode(body[key], validate=True)
                except (binascii.Error, ValueError, TypeError):
                    raise UnreadableBody(f"body {key} is not valid base64") from None
        raise UnreadableBody(f"unknown body shape with keys {sorted(body)}")
    if body is None or isinstance(body, str | bytes):
        return body
    if isinstance(body, bytearray):
        return bytes(body)
    read = getattr(body, "read", None)  # BytesIO request bodies of old cassettes
    if callable(read):
        content = read()
        if isinstance(content, str | bytes):
            return content
    raise UnreadableBody(f"unknown body type {type(body).__name__}")


def decompress(raw: bytes, encoding: str | None, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """The bytes decoded from their content encoding (gzip is trusted over the header),
    never more than `limits.max_body_bytes` of them (BodyLimitError past that)."""
    encoding = (encoding or "").strip().lower()
    # Some tools store the body already decoded but keep the header, so trust the bytes.
    if raw.startswith(_GZIP_MAGIC) and encoding in ("", "gzip", "x-gzip"):
        try:
            return inflate(raw, _GZIP_WBITS, limits)
        except zlib.error as exc:
            raise UnreadableBody(f"corrupt gzip body: {exc}") from None
    if encoding == "deflate":
        for wbits in (zlib.MAX_WBITS, -zlib.MAX_WBITS):
            try:
                return inflate(raw, wbits, limits)
            except zlib.error:
                continue
    if encoding in ("br", "zstd") and not _is_text(raw):
        raise UnreadableBody(f"{encoding}-compressed body: fcreplay cannot decode it")
    return raw


_GZIP_WBITS = 16 + zlib.MAX_WBITS


def inflate(raw: bytes, wbits: int, limits: Limits) -> bytes:
    """zlib/gzip bytes decoded a chunk at a time, stopping at the size and ratio limits.

    Every gzip member is decoded (as `gzip.decompress` does); a stream that ends
    early is a zlib.error, like any other corruption.
    """
    out = bytearray()
    data = raw
    while data:
        inflater = zlib.decompressobj(wbits)
        while not inflater.eof:
            chunk = inflater.decompress(data, _CHUNK)
            data = inflater.unconsumed_tail
            if not chunk and not data:
                break  # all input consumed and nothing pending: the stream is cut short
            out += chunk
            _check_growth(len(out), len(raw), limits)
        if not inflater.eof:
            raise zlib.error("the compressed stream ends early")
        data = inflater.unused_data
        if wbits != _GZIP_WBITS or not data.startswith(_GZIP_MAGIC):
            break  # trailing bytes after the (last) member are ignored, as gzip does
    return bytes(out)


def _check_growth(decoded: int, encoded: int, limits: Limits) -> None:
    if decoded > limits.max_body_bytes:
        raise BodyLimitError(
            f"a compressed body decodes to more than {limits.max_body_bytes} bytes "
            "(the max_body_bytes limit; a decompression bomb?); raise max_body_bytes in the "
            "suite configuration only if the cassette is trusted"
        )
    if decoded > _RATIO_FLOOR and decoded > encoded * limits.max_decompression_ratio:
        raise BodyLimitError(
            f"a compressed body grows more than {limits.max_decompression_ratio} times "
            "when decoded (the max_decompression_ratio limit; a decompression bomb?); raise "
            "max_decompression_ratio only if the cassette is trusted"
        )


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def interpret(
    text: str, headers: Mapping[str, str], uri: str, limits: Limits = DEFAULT_LIMITS
) -> tuple[Any, Any]:
    """Return (body, events) for a response text recorded by another tool."""
    content_type = headers.get("content-type", "").lower()
    if "text/event-stream" in content_type:
        events = parse_sse(text)
        if events:
            return None, tuple(events)
    if framing_of(content_type) == "ndjson" or (
        stream_framing(uri) == "ndjson" and looks_like_ndjson(text)
    ):
        return None, decode_ndjson(text)
    value = decode_data(text, limits.max_json_depth)
    if value is not text:
        if isinstance(value, list) and is_json_array_stream(uri):
            return None, _array_events(value)
        return value, None
    if _looks_like_sse(text):
        return None, tuple(parse_sse(text))
    if text.startswith(_BASE64_GZIP_PREFIX):
        try:
            packed = base64.b64decode(text, validate=True)
            unpacked = inflate(packed, _GZIP_WBITS, limits).decode("utf-8")
        except (binascii.Error, ValueError, zlib.error):
            return text, None
        return interpret(unpacked, headers, uri, limits)
    return text, None


def _looks_like_sse(text: str) -> bool:
    first = text.lstrip("\ufeff\r\n")
    return first.startswith(_SSE_FIELDS)


def _array_events(elements: list[Any]) -> tuple[StreamEvent, ...]:
    return tuple(StreamEvent(None, element) for element in elements)


def stream_framing(uri: str) -> StreamFraming | None:
    """The stream framing of the request URL's adapter, or None for an unknown URL."""
    api = api_for_url(uri)
    return get_adapter(api).CAPABILITIES.stream_framing if api is not None else None


def is_json_array_stream(uri: str) -> bool:
    """Whether a request URL asks for its stream as one JSON array of chunks (its adapter's
    `Capabilities.json_array_stream`)."""
    api = api_for_url(uri)
    return api is not None and get_adapter(api).CAPABILITIES.json_array_stream(uri)
