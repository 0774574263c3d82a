"""The simulator's HTTP side: a threaded loopback server writing each Reply whole or in chunks."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fcreplay.simulator.server import Simulator

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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so clients reuse connections
    server_version = "fcreplay-simulator"
    sys_version = ""
    disable_nagle_algorithm = True  # header and body writes must not wait for delayed ACKs
    timeout = 60  # an idle keep-alive connection gives its thread back eventually
    server: SimulatorServer

    def do_POST(self) -> None:
        length = self.headers.get("content-length")
        if length is None or not length.isdigit():
            self._write(self.server.simulator.plain(411, "a request body needs Content-Length"))
            return
        body = self.rfile.read(int(length))
        self._write(self.server.simulator.handle("POST", self.path, body))

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != "/":
            self._write(self.server.simulator.plain(404, f"no resource at GET {self.path}"))
            return
        info = {
            "simulator": "fcreplay",
            "note": "Synthetic loopback provider simulator: a test and demo tool, "
            "never a source of claims about real models.",
            "script": self.server.simulator.script.source,
            "cases": [case.id for case in self.server.simulator.script.cases],
        }
        headers = {"content-type": "application/json", SIMULATOR_HEADER: "synthetic"}
        self._write(Reply(200, headers, json.dumps(info, ensure_ascii=False).encode("utf-8")))

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
    """A threaded HTTP server (one thread per connection) answering from a Simulator."""

    daemon_threads = True
    block_on_close = False  # clients may hold keep-alive connections open
    request_queue_size = 128  # bursts of concurrent clients must not wait on the backlog

    def __init__(self, simulator: Simulator, host: str = "127.0.0.1", port: int = 0) -> None:
        self.simulator = simulator
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        """Base URL of the server, e.g. http://127.0.0.1:8765."""
        host, port = self.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{port}"
