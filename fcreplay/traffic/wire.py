"""Client traffic as bytes: a client's request read in (credentials kept apart), responses out.

Provider-neutral and library-free: an HTTP client transport (the pytest plugin's
httpx/httpx2 transports) or a server (`fcreplay proxy`) turns its own request
object into a `ClientRequest`, and writes a `Reply` back as its own response.

- `ClientRequest.recorded()` is the request as a cassette keeps it: credential
  headers and query keys removed (`cassettes.redaction`), the body decoded (JSON
  parsed, else text, else bytes); `ClientRequest.credentials()` are the values
  that were removed, which a cassette must never hold (`refuse_leaks`). Each is
  worked out once per request (the body is parsed once, however many ask).
- `read_response` turns a live response's bytes into a `WireResponse`: JSON
  parsed, SSE split into events (event name and data kept, so the framing can be
  written back), Gemini's JSON-array stream split into its chunks.
- `reply_of` writes a recorded response back: one chunk per stream event in SSE
  framing (or the JSON array for Gemini's array stream), JSON bodies as compact
  JSON, with the headers that described the original bytes left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import fcreplay.strictjson as strictjson
from fcreplay.cassettes.bodies import interpret, is_json_array_stream
from fcreplay.cassettes.interactions import RecordedRequest
from fcreplay.cassettes.redaction import SECRET_HEADERS, SECRET_QUERY_KEYS, scrub_headers, scrub_url
from fcreplay.cassettes.sse import format_sse
from fcreplay.neutral import WireResponse

_DERIVED = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers about the bytes on the wire: the recorded body is decoded, so they no longer hold."""
_AUTH_SCHEMES = ("bearer ", "basic ", "token ")


@dataclass(frozen=True)
class ClientRequest:
    """One request as the client sent it, credentials included (never written anywhere)."""

    method: str
    url: str
    """Absolute URL, query included."""
    headers: Mapping[str, str]
    content: bytes

    @cached_property
    def path(self) -> str:
        """Path and query with credential query keys removed: what matching compares."""
        parts = urlsplit(scrub_url(self.url))
        return parts.path + (f"?{parts.query}" if parts.query else "")

    def body(self) -> Any:
        """The body decoded: parsed JSON, else text, else the bytes; None when empty."""
        return self._body

    @cached_property
    def _body(self) -> Any:
        return decode_body(self.content)

    def recorded(self) -> RecordedRequest:
        """The request as a cassette keeps it: no credentials, body decoded."""
        return self._recorded

    @cached_property
    def _recorded(self) -> RecordedRequest:
        return RecordedRequest(
            self.method.upper(), scrub_url(self.url), scrub_headers(self.headers), self._body
        )

    def credentials(self) -> tuple[str, ...]:
        """The secret values this request carries (key headers, auth tokens, URL keys)."""
        return self._credentials

    @cached_property
    def _credentials(self) -> tuple[str, ...]:
        found: list[str] = []
        for name, value in self.headers.items():
            if name.lower() in SECRET_HEADERS and value:
                found.append(value)
                lower = value.lower()
                for scheme in _AUTH_SCHEMES:
                    if lower.startswith(scheme):
                        found.append(value[len(scheme) :].strip())
        parts = urlsplit(self.url)
        found += [v for k, v in parse_qsl(parts.query) if k.lower() in SECRET_QUERY_KEYS and v]
        if parts.password:
            found.append(parts.password)
        return tuple(dict.fromkeys(value for value in found if value))


def decode_body(content: bytes) -> Any:
    """Bytes of a request body as a cassette stores them: JSON, text, bytes, or None."""
    if not content:
        return None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return content
    try:
        # The bytes, not the text: a large body is then checked at C speed, not walked.
        return strictjson.loads(content)
    except ValueError:
        return text


def read_response(
    status: int, headers: Mapping[str, str], content: bytes, uri: str
) -> WireResponse:
    """A live response as a cassette keeps it: credential and per-call headers removed,
    the body decoded (the content already decompressed by the client library)."""
    kept = {name: value for name, value in scrub_headers(headers).items() if name not in _DERIVED}
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return WireResponse(status, kept, content)
    if not text:
        return WireResponse(status, kept, None)
    body, events = interpret(text, kept, uri)
    return WireResponse(status, kept, body, events)


@dataclass(frozen=True)
class Reply:
    """A recorded response ready to write back: status, headers and the body's chunks."""

    status: int
    headers: dict[str, str]
    chunks: tuple[bytes, ...]
    """One chunk per stream event (SSE framing kept), or the whole body as one chunk."""

    @property
    def content(self) -> bytes:
        """The whole body."""
        return b"".join(self.chunks)


def reply_of(response: WireResponse, uri: str) -> Reply:
    """Write a recorded response back as bytes, in the framing it came in."""
    headers = {k: v for k, v in response.headers.items() if k.lower() not in _DERIVED}
    if response.events is not None:
        if is_json_array_stream(uri) and all(event.event is None for event in response.events):
            array = json.dumps([e.data for e in response.events], ensure_ascii=False)
            headers.setdefault("content-type", "application/json; charset=UTF-8")
            return Reply(response.status, headers, (array.encode("utf-8"),))
        headers.setdefault("content-type", "text/event-stream")
        chunks = tuple(format_sse([event]).encode("utf-8") for event in response.events)
        return Reply(response.status, headers, chunks)
    body = response.body
    if body is None:
        return Reply(response.status, headers, ())
    if isinstance(body, bytes):
        return Reply(response.status, headers, (body,))
    if isinstance(body, str):
        return Reply(response.status, headers, (body.encode("utf-8"),))
    headers.setdefault("content-type", "application/json")
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return Reply(response.status, headers, (text.encode("utf-8"),))


def path_of(uri: str) -> str:
    """Path and query of a recorded URI (credential keys already scrubbed at record time)."""
    parts = urlsplit(uri)
    return parts.path + (f"?{parts.query}" if parts.query else "")
