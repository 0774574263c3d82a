"""The simulator's HTTP side: a threaded loopback server writing each Reply whole or in chunks."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SIMULATOR_HEADER = "x-fcreplay-simulator"
"""Header on every answer, whose value "synthetic" says no model wrote it."""


@dataclass(frozen=True)
class Reply:
    """What the handler writes: a whole body, or stream chunks written one by one."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    chunks: tuple[bytes, ...] | None = None
    """Stream pieces (SSE events); sent chunked, or raw then closed when `cut`."""
    cut: bool = False
    """Close the connection after the chunks, without a length or a final chunk."""
    delay: float = 0.0


Responder = Callable[[str, str, bytes | None, Mapping[str, str]], Reply]
"""Answers one request from its method, path, body and headers (lower-case names); the
body is None when there is none to read (a GET, or a POST without a usable
Content-Length)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so clients reuse connections
    server_version = "fcreplay-simulator"
    sys_version = ""
    disable_nagle_algorithm = True  # header and body writes must not wait for delayed ACKs
    timeout = 60  # an idle keep-alive connection gives its thread back eventually
    server: SimulatorServer

    def do_POST(self) -> None:
        length = self.headers.get("content-length")
        body = self.rfile.read(int(length)) if length is not None and length.isdigit() else None
        self._write(self.server.respond("POST", self.path, body, self._headers()))

    def do_GET(self) -> None:
        self._write(self.server.respond("GET", self.path, None, self._headers()))

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _write(self, reply: Reply) -> None:
        if reply.delay > 0:
            time.sleep(reply.delay)  # this connection's own thread: other requests go on
        try:
            self.send_response(reply.status)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            if reply.chunks is None and not reply.cut:
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
                return
            if reply.cut:
                # No length and no chunking: the client reads until the connection closes.
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(b"".join(reply.chunks or (reply.body,)))
                self.close_connection = True
                return
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in reply.chunks or ():
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a request log would drown the output of the tool using the simulator."""


class SimulatorServer(ThreadingHTTPServer):
    """A threaded HTTP server (one thread per connection) answering through `respond`."""

    daemon_threads = True
    block_on_close = False  # clients may hold keep-alive connections open
    request_queue_size = 128  # bursts of concurrent clients must not wait on the backlog

    def __init__(self, respond: Responder, host: str = "127.0.0.1", port: int = 0) -> None:
        self.respond = respond
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        """Base URL of the server, e.g. http://127.0.0.1:8765."""
        host, port = self.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{port}"
