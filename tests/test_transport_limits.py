"""A live answer is bounded: a total deadline over a trickling server, and a size cap.

The servers are tiny threaded HTTP servers on 127.0.0.1 that stop by themselves
(a bounded number of keep-alives or bytes), so a broken limit fails the test
instead of hanging it.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fcreplay.cassettes.store import load_cassette
from fcreplay.engine.transport import HttpTransport
from fcreplay.neutral import TransportError, WireRequest
from fcreplay.runlog import newest_run_log, read_run_log

KEEPALIVE_EVERY = 0.1
"""Seconds between two keep-alives: far below the read timeout, so only a deadline cuts."""
KEEPALIVES = 60
"""At most this many (six seconds), so the server ends even if the client never cuts."""


class _Trickle(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    stream = True
    size = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        kind = "text/event-stream" if self.stream else "application/json"
        self.send_header("content-type", kind)
        self.send_header("connection", "close")
        self.end_headers()
        try:
            if self.size:
                block = b" " * 65536
                for _ in range(self.size // len(block)):
                    self.wfile.write(block)
                return
            for _ in range(KEEPALIVES):
                self.wfile.write(b": keep-alive\n\n" if self.stream else b" ")
                self.wfile.flush()
                time.sleep(KEEPALIVE_EVERY)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client cut the answer, as it should

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@contextmanager
def serving(**attributes: object) -> Iterator[str]:
    handler = type("Handler", (_Trickle,), attributes)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


REQUEST = WireRequest("POST", "/v1/chat/completions", {}, {"stream": True})


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
def test_a_trickling_server_is_cut_at_the_deadline(stream: bool) -> None:
    with serving(stream=stream) as url:
        transport = HttpTransport(url, secret_headers={}, timeout=3.0, deadline=0.8)
        start = time.monotonic()
        with pytest.raises(TransportError) as caught:
            transport.send(REQUEST)
        elapsed = time.monotonic() - start
        transport.close()
    assert caught.value.kind == "deadline"
    assert "request_deadline" in str(caught.value)
    # Cut at the deadline: after it, and well before the read timeout or the server's end.
    assert 0.8 <= elapsed < 2.0


def test_an_answer_over_the_size_cap_is_cut_without_being_held() -> None:
    with serving(stream=False, size=8 * 1024 * 1024) as url:
        transport = HttpTransport(url, secret_headers={}, timeout=5.0, max_bytes=1024 * 1024)
        with pytest.raises(TransportError) as caught:
            transport.send(REQUEST)
        transport.close()
    assert caught.value.kind == "too_large"
    assert "max_response_bytes" in str(caught.value)


def test_record_logs_the_cut_as_the_attempts_transport_error(suite_dir: Path) -> None:
    from fcreplay.cli import run

    config = suite_dir / "fcreplay.toml"
    with serving(stream=True) as url:
        text = config.read_text(encoding="utf-8")
        text = text.replace("http://127.0.0.1:8765", url)
        config.write_text(
            "request_deadline = 0.5\nrepetitions = 1\nmax_retries = 0\n"
            + text.replace("repetitions = 3\n", "").replace("stream = true\n", ""),
            encoding="utf-8",
        )
        start = time.monotonic()
        code = run(
            [
                "record",
                "--config",
                str(config),
                "--target",
                "sim-openai-chat",
                "--variant",
                "auto",
                "--case",
                "direct_lookup",
            ]
        )
        elapsed = time.monotonic() - start
    assert code == 1  # an attempt that got no answer fails the recording
    assert elapsed < 3.0
    (record,) = read_run_log(newest_run_log(suite_dir / "runs")).records
    assert record.transport_error is not None
    assert record.transport_error.type == "deadline"
    cassette = suite_dir / "cassettes" / "sim-openai-chat" / "auto" / "direct_lookup.json"
    assert not cassette.exists() or load_cassette(cassette).interactions == []
