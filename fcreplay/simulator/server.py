"""The bundled loopback provider simulator: a test and demo tool, never a claim about real models.

A real HTTP server (stdlib `ThreadingHTTPServer`, 127.0.0.1 by default) that
speaks every registered wire format through the adapters themselves: each POST
is routed by its path (`api_for_url`), read with the adapter's `read_request`,
answered from a script of decisions and written with `render_response`
(a stream in the framing its capabilities name: SSE, NDJSON, the AWS event
stream, or Gemini's JSON array)
or `render_error`. An adapter without the read-back and server parts is not served.

This module answers requests and runs the server; its siblings hold the rest, and
their public names are re-exported here: `script` the script (its schema is
documented there), `reader` loading and checking it, `answers` the rules that pick
an answer, `http` the HTTP server and its replies, which calls `Simulator.respond`
for each request it reads.

Repetition: a request from `fcreplay record` names its attempt (the
`x-fcreplay-attempt` header), and attempt n takes entry n - 1 (cyclically) of each
CHOICE list, so the same attempt gets the same answer and the same call ids
(`fcsim_r<N>_t<turn>_<i>`) however long the simulator has run: re-recording a suite
is a no-op. Any other client's request counts the times its key (path, model, last
user text, tool-result turns, tool choice, tool order) was seen before: the n-th
request of a key takes entry n; its later turns reuse the first turn's number, read
back from the call ids the simulator issued, so one repetition's turns stay coherent
even when attempts run concurrently; a history without such ids counts its own key.
Requests answered by a fault (other than a delay) do not count.

Not scripted: an unknown path is a plain 404 JSON; a body that is not a JSON object
is a 400 and an unscripted user text or model a 404, both in the provider's own error
envelope. Every answer carries `x-fcreplay-simulator: synthetic`, and
`x-fcreplay-simulated-latency-ms`, the delay it simulated, which a recording takes as
the answer's latency (the loopback round trip says nothing, and would make every
re-recording differ).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.adapters._wire import is_retryable
from fcreplay.adapters.protocol import ReadBackAdapter, ServerAdapter
from fcreplay.adapters.registry import adapters, api_for_url, get_adapter
from fcreplay.cassettes.framing import CONTENT_TYPES
from fcreplay.cassettes.framing import encode as encode_events
from fcreplay.decision import ProviderError
from fcreplay.neutral import (
    ATTEMPT_HEADER,
    SIMULATED_LATENCY_HEADER,
    RequestView,
    StreamEvent,
    WireResponse,
)
from fcreplay.simulator.answers import CALL_TAG, synthetic_usage
from fcreplay.simulator.answers import choose_answer as choose_answer
from fcreplay.simulator.answers import pick as pick
from fcreplay.simulator.answers import to_decision as to_decision
from fcreplay.simulator.answers import unrolled_turns as unrolled_turns
from fcreplay.simulator.http import SIMULATOR_HEADER as SIMULATOR_HEADER
from fcreplay.simulator.http import Reply as Reply
from fcreplay.simulator.http import SimulatorServer as SimulatorServer
from fcreplay.simulator.reader import load_script as load_script
from fcreplay.simulator.reader import parse_script as parse_script
from fcreplay.simulator.script import ANY_MODEL as ANY_MODEL
from fcreplay.simulator.script import FALLBACK_TEXT as FALLBACK_TEXT
from fcreplay.simulator.script import FAULT_KINDS as FAULT_KINDS
from fcreplay.simulator.script import Answer as Answer
from fcreplay.simulator.script import Choice as Choice
from fcreplay.simulator.script import Fault as Fault
from fcreplay.simulator.script import FaultKind as FaultKind
from fcreplay.simulator.script import Profile as Profile
from fcreplay.simulator.script import Script as Script
from fcreplay.simulator.script import ScriptCase as ScriptCase
from fcreplay.simulator.script import ScriptedCall as ScriptedCall

_ERROR_TEXT = {
    429: "Rate limit reached; retry later",
    500: "Internal server error",
    502: "Bad gateway",
    503: "Service unavailable",
    529: "Overloaded",
}


class Simulator:
    """Answers requests from a script; thread-safe (one lock guards every counter)."""

    def __init__(self, script: Script, latency: float = 0.0) -> None:
        self.script = script
        self.latency = latency
        self._lock = threading.Lock()
        self._seen: dict[tuple[Any, ...], int] = {}
        self._fired: dict[tuple[int, int], int] = {}

    def handle(
        self, method: str, path: str, body: bytes, headers: Mapping[str, str] | None = None
    ) -> Reply:
        """Answer one HTTP request (never raises for a bad request)."""
        if method != "POST":
            return self.plain(405, f"fcreplay simulator: {method} is not supported; POST")
        api = api_for_url(path)
        if api is None:
            return self.plain(404, f"fcreplay simulator: no provider API at POST {path}")
        adapter = get_adapter(api)
        if not (isinstance(adapter, ReadBackAdapter) and isinstance(adapter, ServerAdapter)):
            return self.plain(
                404,
                f"fcreplay simulator: the {api} adapter cannot be served (it lacks the read-back "
                "part, read_request, or the server part, render_response and render_error)",
            )
        try:
            request = strictjson.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            error = _provider_error(
                400, "fcreplay simulator: the request body is not a JSON object"
            )
            return self._rendered(adapter.render_error(error), path, api)
        view = adapter.read_request(request, path)
        case = self.script.case_for(view.last_user_text, view.tool_names)
        fault = self._fault(api, view, case)
        delay = self.latency + (fault.seconds if fault is not None else 0.0)
        if fault is not None and fault.kind == "error":
            error = _provider_error(fault.status, fault.message, fault)
            stream = view.stream and fault.in_stream
            reply = self._rendered(adapter.render_error(error, stream=stream), path, api, delay)
            if fault.retry_after is not None:
                reply.headers.setdefault("retry-after", _seconds_text(fault.retry_after))
            return reply
        if case is None:
            shown = (view.last_user_text or "")[:80]
            message = f"fcreplay simulator: no scripted case for the user message {shown!r}"
            return self._rendered(adapter.render_error(_provider_error(404, message)), path, api)
        profile = case.profile(view.model)
        if profile is None:
            message = (
                f"fcreplay simulator: model {view.model!r} is not scripted for case {case.id!r} "
                f"(scripted: {', '.join(case.profiles)})"
            )
            return self._rendered(adapter.render_error(_provider_error(404, message)), path, api)
        forced = view.tool_choice.tool if view.tool_choice.mode == "forced" else None
        if forced is not None and forced not in view.tool_names:
            message = f"fcreplay simulator: tool_choice forces {forced!r}, which is not declared"
            return self._rendered(adapter.render_error(_provider_error(400, message)), path, api)
        counted = fault is None or fault.kind == "delay"
        attempt = (headers or {}).get(ATTEMPT_HEADER, "")
        if attempt.isdigit() and int(attempt) > 0:
            repetition = int(attempt) - 1
        else:
            repetition = self._repetition(path, view, body, counted)
        answer = choose_answer(profile, view, repetition, self.script.fallback_text)
        decision = to_decision(
            answer, adapter.CAPABILITIES, view.model, repetition, view.tool_result_turns
        )
        decision = replace(decision, usage=synthetic_usage(body, decision))
        wire = adapter.render_response(decision, stream=view.stream)
        if fault is not None and fault.kind == "malformed_json":
            wire = _malformed(wire)
        keep = None
        if fault is not None and fault.kind == "truncated_stream" and wire.events is not None:
            total = len(wire.events)
            keep = min(
                fault.keep_events if fault.keep_events is not None else total // 2, total - 1
            )
        return self._rendered(wire, path, api, delay, keep=keep)

    def _fault(self, api: str, view: RequestView, case: ScriptCase | None) -> Fault | None:
        scopes = [(0, self.script.faults)]
        if case is not None:
            scopes.append((self.script.case_scopes[case.id], case.faults))
        with self._lock:
            for scope, faults in scopes:
                for index, fault in enumerate(faults):
                    key = (scope, index)
                    if not fault.matches(api, view):
                        continue
                    if fault.count is not None and self._fired.get(key, 0) >= fault.count:
                        continue
                    self._fired[key] = self._fired.get(key, 0) + 1
                    return fault
        return None

    def _repetition(self, path: str, view: RequestView, body: bytes, counted: bool) -> int:
        key = (
            path,
            view.model,
            (view.last_user_text or "").strip(),
            view.tool_result_turns,
            view.tool_choice,
            view.tool_names,
        )
        with self._lock:
            seen = self._seen.get(key, 0)
            if counted:
                self._seen[key] = seen + 1
        if view.tool_result_turns > 0:
            tags = CALL_TAG.findall(body)
            if tags:
                return int(tags[-1])
        return seen

    def respond(
        self, method: str, path: str, body: bytes | None, headers: Mapping[str, str]
    ) -> Reply:
        """Answer a request as the HTTP server read it: GET / describes the simulator."""
        if method == "GET":
            if path.split("?", 1)[0] != "/":
                return self.plain(404, f"no resource at GET {path}")
            info = {
                "simulator": "fcreplay",
                "note": "Synthetic loopback provider simulator: a test and demo tool, "
                "never a source of claims about real models.",
                "script": self.script.source,
                "cases": [case.id for case in self.script.cases],
            }
            headers = {"content-type": "application/json", SIMULATOR_HEADER: "synthetic"}
            return Reply(200, headers, json.dumps(info, ensure_ascii=False).encode("utf-8"))
        if body is None:
            return self.plain(411, "a request body needs Content-Length")
        return self.handle(method, path, body, headers)

    def plain(self, status: int, message: str) -> Reply:
        body = json.dumps({"error": {"message": message, "type": "fcreplay_simulator"}})
        headers = {
            "content-type": "application/json",
            SIMULATOR_HEADER: "synthetic",
            SIMULATED_LATENCY_HEADER: str(round(self.latency * 1000)),
        }
        return Reply(status, headers, body.encode("utf-8"), delay=self.latency)

    def _rendered(
        self,
        wire: WireResponse,
        path: str,
        api: str,
        delay: float | None = None,
        keep: int | None = None,
    ) -> Reply:
        headers = {key.lower(): value for key, value in wire.headers.items()}
        headers[SIMULATOR_HEADER] = "synthetic"
        delay = self.latency if delay is None else delay
        headers[SIMULATED_LATENCY_HEADER] = str(round(delay * 1000))
        if wire.events is None:
            headers.setdefault("content-type", "application/json")
            return Reply(wire.status, headers, _body_bytes(wire.body), delay=delay)
        events = wire.events if keep is None else wire.events[:keep]
        if get_adapter(api).CAPABILITIES.json_array_stream(path):
            headers["content-type"] = "application/json; charset=UTF-8"
            text = json.dumps([event.data for event in events], ensure_ascii=False)
            if keep is not None:
                text = text[:-1]  # the array never closes
            return Reply(
                wire.status, headers, text.encode("utf-8"), cut=keep is not None, delay=delay
            )
        framing = get_adapter(api).CAPABILITIES.stream_framing
        headers.setdefault("content-type", CONTENT_TYPES[framing])
        headers["cache-control"] = "no-cache"
        chunks = tuple(encode_events(framing, events))
        return Reply(wire.status, headers, chunks=chunks, cut=keep is not None, delay=delay)


def _provider_error(status: int, message: str | None, fault: Fault | None = None) -> ProviderError:
    text = message or (
        f"{_ERROR_TEXT.get(status, 'Error')} (fcreplay simulator: injected {status} fault)"
    )
    return ProviderError(
        status=status,
        type=fault.type if fault is not None else None,
        code=fault.code if fault is not None else None,
        message=text,
        retryable=is_retryable(status),
        retry_after=fault.retry_after if fault is not None else None,
    )


def _malformed(wire: WireResponse) -> WireResponse:
    """The same answer with its JSON cut in half: the body, or the first JSON event."""
    if wire.events is None:
        text = (
            wire.body if isinstance(wire.body, str) else json.dumps(wire.body, ensure_ascii=False)
        )
        return WireResponse(200, dict(wire.headers), text[: len(text) // 2])
    events = list(wire.events)
    for index, event in enumerate(events):
        if isinstance(event.data, dict | list):
            text = json.dumps(event.data, ensure_ascii=False)
            events[index] = StreamEvent(event.event, text[: len(text) // 2])
            break
    return WireResponse(200, dict(wire.headers), events=tuple(events))


def _body_bytes(body: Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _seconds_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


ScriptSource = Script | str | Path | Mapping[str, Any]


def as_script(script: ScriptSource) -> Script:
    """A Script from a Script, a script file path, or a script document."""
    if isinstance(script, Script):
        return script
    if isinstance(script, str | Path):
        return load_script(script)
    return parse_script(dict(script))


def make_server(
    script: ScriptSource, host: str = "127.0.0.1", port: int = 0, latency: float = 0.0
) -> SimulatorServer:
    """Bind a simulator server (port 0 picks a free port); call serve_forever to run it."""
    return SimulatorServer(Simulator(as_script(script), latency).respond, host, port)


@contextmanager
def running_simulator(
    script: ScriptSource, host: str = "127.0.0.1", port: int = 0, latency: float = 0.0
) -> Iterator[str]:
    """Run a simulator in a background thread for the block; yield its base URL."""
    server = make_server(script, host, port, latency)
    # A short poll interval makes leaving the block quick (shutdown waits for one poll).
    thread = threading.Thread(
        target=server.serve_forever, args=(0.02,), name="fcreplay-simulator", daemon=True
    )
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def base_urls(url: str) -> dict[str, str]:
    """The base_url to configure for each served adapter to reach a simulator at `url`."""
    from urllib.parse import urlsplit

    return {
        name: url + urlsplit(adapter.DEFAULT_BASE_URL).path.rstrip("/")
        for name, adapter in adapters()
        if isinstance(adapter, ReadBackAdapter) and isinstance(adapter, ServerAdapter)
    }
