"""The proxy's HTTP side: a threaded loopback server writing answers whole or chunk by chunk.

Each request is read whole; each answer is written whole, or chunk by chunk as it
is produced, so a stream reaches the client event by event.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 64 * 1024 * 1024
"""Largest request body read; model requests are far smaller, and a bigger one is a mistake."""


@dataclass(frozen=True)
class IncomingRequest:
    """A request as a client sent it to the proxy."""

    method: str
    target: str
    """The request target: path and query, exactly as sent."""
    headers: dict[str, str]
    """Lower-case names; a repeated header keeps its last value."""
    body: bytes | None
    """None when the request had no body."""


@dataclass(frozen=True)
class OutgoingReply:
    """What the handler writes back: a whole body, or chunks sent as each one is ready."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    chunks: Iterable[bytes] | None = field(default=None, compare=False)
    """Written with chunked transfer encoding, each chunk flushed as soon as it is produced;
    the reply ends when the iterable does (its generator may still be working on the
    answer, e.g. saving the cassette, before it stops)."""


Handler = Callable[[IncomingRequest], OutgoingReply]
"""Answers one request; must not raise (an exception becomes a plain 500)."""


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: SDK clients reuse their connections
    server_version = "fcreplay-proxy"
    sys_version = ""
    disable_nagle_algorithm = True  # each streamed event must leave at once
    timeout = 120  # an idle keep-alive connection gives its thread back eventually
    server: ProxyServer

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        try:
            body = self._read_body()
        except _BadRequest as exc:
            self.close_connection = True
            self._write(OutgoingReply(exc.status, {"content-type": "text/plain"}, exc.message))
            return
        if self.server.closing:
            self.close_connection = True
            message = b"fcreplay proxy: shutting down"
            self._write(OutgoingReply(503, {"content-type": "text/plain"}, message))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = IncomingRequest(self.command, self.path, headers, body)
        with self.server.in_flight():
            try:
                reply = self.server.handler(request)
            except Exception as exc:  # a bug must not kill the connection thread silently
                text = f"fcreplay proxy: internal error: {type(exc).__name__}: {exc}"
                reply = OutgoingReply(
                    500, {"content-type": "text/plain; charset=utf-8"}, text.encode()
                )
            self._write(reply)

    def _read_body(self) -> bytes | None:
        length = self.headers.get("content-length")
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            return self._read_chunked()
        if length is None:
            return None
        if not length.strip().isdigit() or int(length) > MAX_BODY:
            raise _BadRequest(400, f"unusable Content-Length {length!r}")
        return self.rfile.read(int(length))

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        size = 0
        while True:
            line = self.rfile.readline(1024).split(b";", 1)[0].strip()
            try:
                length = int(line, 16)
            except ValueError:
                raise _BadRequest(400, "malformed chunked request body") from None
            if length == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers carry nothing a model request needs
                return b"".join(parts)
            size += length
            if size > MAX_BODY:
                raise _BadRequest(413, "request body too large")
            parts.append(self.rfile.read(length))
            self.rfile.readline(8)

    def _write(self, reply: OutgoingReply) -> None:
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.chunks is None:
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(reply.body)
                return
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            for chunk in reply.chunks:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            # The client went away; closing the chunks tells their producer to stop.
            self.close_connection = True
            close = getattr(reply.chunks, "close", None)
            if callable(close):
                close()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the proxy logs exchanges itself, one line each."""


class _BadRequest(Exception):
    """The request cannot be read; answered at once and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = f"fcreplay proxy: {message}".encode()


class ProxyServer(ThreadingHTTPServer):
    """A threaded HTTP server (one thread per connection) answering through `handler`.

    It counts the requests being answered, so a shutdown can wait for them to end.
    """

    daemon_threads = True  # an idle keep-alive connection must not hold up the exit
    block_on_close = False
    request_queue_size = 128  # bursts of concurrent test clients must not wait on the backlog

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0) -> None:
        self.handler = handler
        self.closing = False
        """Set when the proxy stops: requests still arriving get a 503."""
        self._busy = 0
        self._idle = threading.Condition()
        super().__init__((host, port), _RequestHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet for a client that hung up (a test runner killing its workers); loud otherwise."""
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        """Base URL of the server, e.g. http://127.0.0.1:8080."""
        host, port = self.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{port}"

    @property
    def port(self) -> int:
        """The port it listens on (the one picked when it was asked for 0)."""
        return int(self.server_address[1])

    @contextmanager
    def in_flight(self) -> Iterator[None]:
        """Count one request as being answered for the block."""
        with self._idle:
            self._busy += 1
        try:
            yield
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no request is being answered; False if some still are after `timeout`."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)
