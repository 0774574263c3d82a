"""Recording a generated suite in-process: the real runner, answered by `Simulator.handle`
through a transport that opens no socket (used by generate.py; never timed)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import domain

from fcreplay.adapters.protocol import ReadBackAdapter
from fcreplay.adapters.registry import get_adapter
from fcreplay.cassettes.sse import parse_sse
from fcreplay.engine import runner
from fcreplay.engine.progress import Progress
from fcreplay.inputs.suite import load_suite
from fcreplay.neutral import RoundTrip, WireRequest, WireResponse
from fcreplay.simulator.server import Reply, Simulator, parse_script

FIXED_DATE = "Sun, 01 Nov 2026 12:00:00 GMT"
"""The `date` header the simulator's HTTP server would add, fixed so output is stable."""


class SimulatorTransport:
    """Answers one target's requests with `Simulator.handle`, no sockets involved.

    One Simulator per (case, tool choice, first declared tool) keeps each lookup
    constant-time (the simulator finds cases by a linear scan) and makes recording
    deterministic under concurrency: every variant of a case counts its own
    repetitions, and injected faults live only in the automatic variant.
    """

    def __init__(self, base_url: str, adapter: ReadBackAdapter, script: dict[str, Any]) -> None:
        self._base_url = base_url.rstrip("/")
        self._adapter = adapter
        self._cases: dict[str, Any] = script["cases"]
        self._by_user = {case["user"].strip(): case_id for case_id, case in self._cases.items()}
        self._auto_first = domain.TOOLS[0].name
        self._simulators: dict[tuple[str, str, tuple[str, ...]], Simulator] = {}
        self._lock = threading.Lock()

    def _simulator(self, user: str, mode: str, first: tuple[str, ...]) -> Simulator:
        key = (user, mode, first)
        with self._lock:
            simulator = self._simulators.get(key)
            if simulator is None:
                case_id = self._by_user.get(user)
                cases = {}
                if case_id is not None:
                    case = dict(self._cases[case_id])
                    if mode not in ("auto", "required") or first != (self._auto_first,):
                        case.pop("faults", None)
                    cases[case_id] = case
                simulator = Simulator(parse_script({"cases": cases}))
                self._simulators[key] = simulator
        return simulator

    def send(self, request: WireRequest) -> RoundTrip:
        url = self._base_url + request.path
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        view = self._adapter.read_request(request.body, request.path)
        simulator = self._simulator(
            (view.last_user_text or "").strip(), view.tool_choice.mode, view.tool_names[:1]
        )
        body = json.dumps(request.body, ensure_ascii=False).encode("utf-8")
        reply = simulator.handle(request.method, path, body, request.headers)
        return RoundTrip(request.method, url, dict(request.headers), request.body, _wire(reply))

    def close(self) -> None:
        """Nothing to release."""


def _wire(reply: Reply) -> WireResponse:
    """What `fcreplay.transport.HttpTransport` reads from the simulator's HTTP answer."""
    headers = {"server": "fcreplay-simulator", "date": FIXED_DATE, **reply.headers}
    raw = b"".join(reply.chunks) if reply.chunks is not None else reply.body
    text = raw.decode("utf-8", errors="replace")
    if (
        headers.get("content-type", "").startswith("text/event-stream")
        and 200 <= reply.status < 300
    ):
        return WireResponse(reply.status, headers, None, tuple(parse_sse(text)))
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = text
    return WireResponse(reply.status, headers, parsed)


def record(folder: Path, script: dict[str, Any], *, concurrency: int) -> str:
    """Record every unit of the suite in `folder` through the real runner; return the run id."""
    suite = load_suite(folder / "fcreplay.toml")
    transports = {
        target.name: SimulatorTransport(target.base_url or "", get_adapter(target.adapter), script)
        for target in suite.config.targets
    }
    result = runner.record(
        suite,
        runner.RecordOptions(transports=transports, concurrency=concurrency),
        progress=Progress(0, label="record "),
    )
    return result.run_id
