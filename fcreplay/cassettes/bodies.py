"""Decoding what recorders store: header lists, body wrappers, encodings and stream forms.

Cassettes written by other tools hold bodies as strings, `{"string": ...}`,
base64 (`base64_string`), gzip or deflate bytes (sometimes base64-encoded inside
JSON), SSE text, or a JSON-array stream (when the request URL's adapter says its
format streams that way); each is decoded here to parsed JSON, text, bytes or
stream events. Pure functions: no file access, no vcrpy.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import zlib
from collections.abc import Mapping
from typing import Any

from fcreplay.adapters.registry import api_for_url, get_adapter
from fcreplay.cassettes.sse import decode_data, parse_sse
from fcreplay.neutral import StreamEvent

_GZIP_MAGIC = b"\x1f\x8b"
_BASE64_GZIP_PREFIX = "H4sI"
"""What gzip bytes look like once base64-encoded (projects that store binary in JSON)."""
_SSE_FIELDS = ("data:", "event:", "id:", "retry:", ":")


class UnreadableBody(Exception):
    """A recorded body cannot be decoded."""


def read_headers(value: Any) -> dict[str, str]:
    """Recorded headers as lower-case names, first value of each."""
    if not value:
        return {}
    found: dict[str, str] = {}
    for name, values in value.items():
        if isinstance(values, list | tuple):
            if not values:
                continue
            values = values[0]
        found.setdefault(str(name).lower(), str(values))
    return found


def request_body(request: Mapping[str, Any]) -> Any:
    """A recorded request's body: parsed JSON, text, bytes that are not text, or None."""
    if "parsed_body" in request:
        return request["parsed_body"]
    raw = unwrap(request.get("body"))
    if raw is None:
        return None
    if isinstance(raw, bytes):
        raw = decompress(raw, read_headers(request.get("headers")).get("content-encoding"))
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw
    if raw == "":
        return None
    return decode_data(raw)


def response_body(
    response: Mapping[str, Any], headers: Mapping[str, str], uri: str, *, own: bool
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
        raw = unwrap(response.get("body"))
        if isinstance(raw, bytes):
            raw = decompress(raw, headers.get("content-encoding"))
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                return raw, None  # a binary protocol, kept as is
        if raw is not None and raw != "":
            body, events = (raw, None) if own else interpret(raw, headers, uri)
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


def decompress(raw: bytes, encoding: str | None) -> bytes:
    """The bytes decoded from their content encoding (gzip is trusted over the header)."""
    encoding = (encoding or "").strip().lower()
    # Some tools store the body already decoded but keep the header, so trust the bytes.
    if raw.startswith(_GZIP_MAGIC) and encoding in ("", "gzip", "x-gzip"):
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise UnreadableBody(f"corrupt gzip body: {exc}") from None
    if encoding == "deflate":
        for wbits in (zlib.MAX_WBITS, -zlib.MAX_WBITS):
            try:
                return zlib.decompress(raw, wbits)
            except zlib.error:
                continue
    if encoding in ("br", "zstd") and not _is_text(raw):
        raise UnreadableBody(f"{encoding}-compressed body: fcreplay cannot decode it")
    return raw


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def interpret(text: str, headers: Mapping[str, str], uri: str) -> tuple[Any, Any]:
    """Return (body, events) for a response text recorded by another tool."""
    content_type = headers.get("content-type", "").lower()
    if "text/event-stream" in content_type:
        events = parse_sse(text)
        if events:
            return None, tuple(events)
    value = decode_data(text)
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
        return interpret(unpacked, headers, uri)
    return text, None


def _looks_like_sse(text: str) -> bool:
    first = text.lstrip("\ufeff\r\n")
    return first.startswith(_SSE_FIELDS)


def _array_events(elements: list[Any]) -> tuple[StreamEvent, ...]:
    return tuple(StreamEvent(None, element) for element in elements)


def is_json_array_stream(uri: str) -> bool:
    """Whether a request URL asks for its stream as one JSON array of chunks (its adapter's
    `Capabilities.json_array_stream`)."""
    api = api_for_url(uri)
    return api is not None and get_adapter(api).CAPABILITIES.json_array_stream(uri)
