"""Running the proxy: listen, announce it (line, port file, ready file), stop cleanly on a signal.

Every exchange is written to its cassette as it finishes, so a stop loses none of
them; a stop waits (boundedly) for the requests in flight to finish, and answers
any request that still arrives on an open connection with a 503.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from fcreplay.atomic import write_text_atomically
from fcreplay.proxy.http import Handler, ProxyServer

DRAIN_SECONDS = 30.0
"""How long a stop waits for the requests in flight (a long stream) to finish."""


def bind(handler: Handler, host: str, port: int) -> ProxyServer:
    """Listen on host:port (0 picks a free port); OSError when it cannot."""
    return ProxyServer(handler, host, port)


@contextmanager
def serving(server: ProxyServer, drain_seconds: float = DRAIN_SECONDS) -> Iterator[str]:
    """Serve in a background thread for the block; yield the base URL; stop and drain after."""
    # A short poll interval makes the stop quick (shutdown waits for one poll).
    thread = threading.Thread(
        target=server.serve_forever, args=(0.05,), name="fcreplay-proxy", daemon=True
    )
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        thread.join()
        server.closing = True
        server.wait_idle(drain_seconds)
        server.server_close()


def announce(server: ProxyServer, port_file: Path | None, ready_file: Path | None) -> None:
    """Write the port and ready files (atomically: a reader never sees half a line)."""
    if port_file is not None:
        write_text_atomically(port_file, f"{server.port}\n")
    if ready_file is not None:
        write_text_atomically(ready_file, f"{server.url}\n")


def run_until_stopped(
    server: ProxyServer,
    *,
    port_file: Path | None,
    ready_file: Path | None,
    on_ready: Callable[[str], None],
) -> str:
    """Serve until SIGINT or SIGTERM (main thread only); return the name of the signal."""
    stop = threading.Event()
    received: list[str] = []

    def handle(signum: int, frame: FrameType | None) -> None:
        received.append(signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    # Stale files from an earlier run must not tell a script that this one is up.
    for path in (port_file, ready_file):
        if path is not None:
            path.unlink(missing_ok=True)
    try:
        with serving(server) as url:
            announce(server, port_file, ready_file)
            on_ready(url)
            stop.wait()
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
        if ready_file is not None:
            ready_file.unlink(missing_ok=True)
    return received[0] if received else "stop"
