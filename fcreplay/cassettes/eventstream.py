"""AWS event-stream binary framing (`application/vnd.amazon.eventstream`), read and written.

Each message is a prelude (total length, headers length, CRC32 of those 8 bytes),
headers (1-byte name length, name, 1-byte value type, value), a payload and a CRC32
of everything before it; all integers big-endian. A message becomes one StreamEvent:
an `event` message is named by its `:event-type` header, an `exception` message
`exception:<:exception-type>`, an `error` message `error:<:error-code>` (data
`{"message": <:error-message>}`); a JSON payload is parsed. A frame whose checksum
fails or that is cut short ends the stream there: the events before it are kept,
as a truncated stream's are.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable
from typing import Any

from fcreplay.neutral import StreamEvent

CONTENT_TYPE = "application/vnd.amazon.eventstream"

_PRELUDE = struct.Struct(">II")
_STRING = 7
_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
"""Value types with a fixed width (true, false, byte, short, int, long, timestamp, uuid)."""
_EXCEPTION, _ERROR = "exception:", "error:"


def decode(raw: bytes) -> list[StreamEvent]:
    """The events of a whole recorded stream, up to the first frame that does not check."""
    events: list[StreamEvent] = []
    offset = 0
    while offset + 12 <= len(raw):
        total, header_length = _PRELUDE.unpack_from(raw, offset)
        end = offset + total
        if total < 16 or end > len(raw) or header_length > total - 16:
            break
        if zlib.crc32(raw[offset : offset + 8]) != struct.unpack_from(">I", raw, offset + 8)[0]:
            break
        if zlib.crc32(raw[offset : end - 4]) != struct.unpack_from(">I", raw, end - 4)[0]:
            break
        headers = _headers(raw[offset + 12 : offset + 12 + header_length])
        if headers is None:
            break
        events.append(_event(headers, raw[offset + 12 + header_length : end - 4]))
        offset = end
    return events


def looks_like(raw: bytes) -> bool:
    """Whether bytes start with a well-formed event-stream prelude."""
    if len(raw) < 16:
        return False
    total, _ = _PRELUDE.unpack_from(raw, 0)
    (checksum,) = struct.unpack_from(">I", raw, 8)
    return bool(total <= len(raw) and zlib.crc32(raw[:8]) == checksum)


def _headers(block: bytes) -> dict[str, Any] | None:
    headers: dict[str, Any] = {}
    at = 0
    try:
        while at < len(block):
            size = block[at]
            name = block[at + 1 : at + 1 + size].decode("utf-8")
            kind = block[at + 1 + size]
            at += 2 + size
            if kind in (_STRING, 6):
                (length,) = struct.unpack_from(">H", block, at)
                value: Any = block[at + 2 : at + 2 + length]
                headers[name] = value.decode("utf-8") if kind == _STRING else value
                at += 2 + length
            elif kind in _FIXED:
                headers[name] = kind == 0 if kind in (0, 1) else block[at : at + _FIXED[kind]]
                at += _FIXED[kind]
            else:
                return None
    except (IndexError, struct.error, UnicodeDecodeError):
        return None
    return headers


def _event(headers: dict[str, Any], payload: bytes) -> StreamEvent:
    text = payload.decode("utf-8", errors="replace")
    try:
        data: Any = json.loads(text) if text else {}
    except ValueError:
        data = text
    kind = headers.get(":message-type", "event")
    if kind == "exception":
        return StreamEvent(_EXCEPTION + str(headers.get(":exception-type", "")), data)
    if kind == "error":
        message = {"message": headers.get(":error-message", "")}
        return StreamEvent(_ERROR + str(headers.get(":error-code", "")), message)
    return StreamEvent(str(headers.get(":event-type", "")), data)


def encode(events: Iterable[StreamEvent]) -> list[bytes]:
    """Each event as one framed message (the inverse of `decode`)."""
    return [_frame(event) for event in events]


def _frame(event: StreamEvent) -> bytes:
    name = event.event or ""
    payload = b""
    if name.startswith(_ERROR):
        data = event.data if isinstance(event.data, dict) else {}
        headers = {
            ":message-type": "error",
            ":error-code": name.removeprefix(_ERROR),
            ":error-message": str(data.get("message", "")),
        }
    else:
        kind, header, value = ("event", ":event-type", name)
        if name.startswith(_EXCEPTION):
            kind, header, value = ("exception", ":exception-type", name.removeprefix(_EXCEPTION))
        headers = {header: value, ":content-type": "application/json", ":message-type": kind}
        data = event.data
        payload = (data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)).encode()
    block = b"".join(_header(key, value) for key, value in headers.items())
    total = 12 + len(block) + len(payload) + 4
    prelude = _PRELUDE.pack(total, len(block))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + block + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _header(name: str, value: str) -> bytes:
    key, text = name.encode("utf-8"), value.encode("utf-8")
    return bytes([len(key)]) + key + bytes([_STRING]) + struct.pack(">H", len(text)) + text
