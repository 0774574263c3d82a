"""Replay throughput of `fcreplay proxy` with 16 concurrent clients.

The exchanges are the recorded requests of a generated suite (whole cassettes,
picked at an even stride until about `total` exchanges): each cassette becomes one
proxy cassette (`x-fcreplay-cassette: <target>/<variant>/<case>`), its requests
sent in order by one client. First they are recorded through the proxy
(`--record-mode once`) in front of the simulator running in this process; then a
fresh proxy (`--record-mode none`, no upstream, the simulator stopped) replays
them. Only the replay is timed: from the moment the 16 client threads (one
keep-alive `httpx.Client` each) are released until the last answer is read.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from common import fcreplay, log, read_cassette

CLIENTS = 16
TOTAL = 2000
Unit = tuple[str, list[tuple[str, str, bytes]]]


def pick_units(cassettes: Path, total: int) -> list[Unit]:
    """Whole cassettes at an even stride, until they hold `total` exchanges (or all do)."""
    files = sorted(cassettes.rglob("*.json"))
    chosen: list[Unit] = []
    count = 0
    stride = max(1, len(files) // max(1, total // 3))
    for offset in range(stride):
        for index in range(offset, len(files), stride):
            if count >= total:
                return chosen
            document = read_cassette(files[index])
            requests = []
            for interaction in document["interactions"]:
                request = interaction["request"]
                path = "/" + request["uri"].split("://", 1)[-1].split("/", 1)[1]
                body = request.get("parsed_body", request.get("body"))
                raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                requests.append((request["method"], path, raw))
            chosen.append((str(files[index].relative_to(cassettes).with_suffix("")), requests))
            count += len(requests)
    return chosen


class Proxy:
    """`fcreplay proxy` in a child process, from start until SIGTERM; its CPU time."""

    def __init__(self, scratch: Path, mode: str, cassettes: Path, upstream: str | None) -> None:
        ready = scratch / f"proxy-ready-{mode}"
        ready.unlink(missing_ok=True)
        command = fcreplay(
            "proxy",
            "--cassette-dir",
            str(cassettes),
            "--record-mode",
            mode,
            "--port",
            "0",
            "--ready-file",
            str(ready),
            "--runs",
            str(scratch / f"proxy-runs-{mode}"),
            "--quiet",
        )
        if upstream is not None:
            command += ["--upstream", upstream]
        self.output = scratch / f"proxy-{mode}.txt"
        with self.output.open("wb") as sink:
            self.process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not ready.is_file():  # waiting for start-up, outside every timing
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("fcreplay proxy did not start:\n" + self.output.read_text())
            time.sleep(0.05)
        self.url = ready.read_text(encoding="utf-8").strip()

    def stop(self) -> dict[str, Any]:
        self.process.send_signal(signal.SIGTERM)
        _, status, usage = os.wait4(self.process.pid, 0)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        lines = self.output.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        return {
            "exit_code": self.process.returncode,
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024,
            "last_line": lines[-1] if lines else "",
        }


def drive(url: str, units: list[Unit], clients: int = CLIENTS) -> dict[str, Any]:
    """Send every unit's requests (each unit by one client, in order) from `clients`
    threads; the wall time from their release to the last answer read."""
    import httpx

    work: queue.SimpleQueue[Unit] = queue.SimpleQueue()
    for unit in units:
        work.put(unit)
    barrier = threading.Barrier(clients + 1)
    answers: list[tuple[str, int, str]] = []
    failures: list[str] = []
    lock = threading.Lock()

    def client() -> None:
        seen = []
        with httpx.Client(base_url=url, timeout=120) as http:
            barrier.wait()
            while True:
                try:
                    name, requests = work.get_nowait()
                except queue.Empty:
                    break
                for method, path, body in requests:
                    headers = {"content-type": "application/json", "x-fcreplay-cassette": name}
                    try:
                        response = http.request(method, path, content=body, headers=headers)
                        response.read()
                    except httpx.HTTPError as exc:
                        with lock:
                            failures.append(f"{name} {path}: {exc!r}")
                        continue
                    how = response.headers.get("x-fcreplay-proxy", "?")
                    seen.append((f"{name} {path}", response.status_code, how))
        with lock:
            answers.extend(seen)

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started, cpu = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.join()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    hows: dict[str, int] = {}
    for _, _, how in answers:
        hows[how] = hows.get(how, 0) + 1
    return {
        "seconds": seconds,
        "exchanges": len(answers),
        "exchanges_per_second": len(answers) / seconds if seconds else 0.0,
        "client_cpu_seconds": cpu,
        "answers": hows,
        "statuses": sorted({status for _, status, _ in answers}),
        "failures": failures[:5],
        "failed": len(failures),
        "_status_by_request": sorted((key, status) for key, status, _ in answers),
    }


def _through(proxy: Proxy, units: list[Unit], clients: int) -> dict[str, Any]:
    try:
        driven = drive(proxy.url, units, clients)
    finally:
        stopped = proxy.stop()
    return driven | {"proxy": stopped}


def proxy_throughput(
    folder: Path, scratch: Path, total: int = TOTAL, clients: int = CLIENTS
) -> dict[str, Any]:
    """Record `total` exchanges of a suite through the proxy, then time their replay."""
    from fcreplay.simulator.server import running_simulator

    units = pick_units(folder / "cassettes", total)
    cassettes = scratch / "proxy-cassettes"
    log(f"proxy: recording {sum(len(r) for _, r in units)} exchanges through the proxy ...")
    with running_simulator(folder / "simulator.json") as upstream:
        recorded = _through(Proxy(scratch, "once", cassettes, upstream), units, clients)
    log(f"proxy: replaying them with {clients} clients ...")
    replayed = _through(Proxy(scratch, "none", cassettes, None), units, clients)
    same = recorded.pop("_status_by_request") == replayed.pop("_status_by_request")
    return {
        "suite": folder.name,
        "clients": clients,
        "cassettes": len(units),
        "record": recorded,
        "replay": replayed,
        "statuses_as_recorded": same,
        "all_replayed": replayed["answers"] == {"replayed": replayed["exchanges"]}
        and replayed["failed"] == 0,
    }
