"""The proxy on the wire: streams pass through event by event; curl for Anthropic and Gemini."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from fcreplay.cassettes.sse import parse_sse
from fcreplay.cassettes.store import load_cassette
from fcreplay.check_traffic import check_traffic
from fcreplay.inputs.contract import load_contract
from fcreplay.proxy.routes import parse_routes
from fcreplay.proxy.selection import Selector
from fcreplay.simulator.server import running_simulator

from .conftest import CONTRACT
from .proxy_support import FAKE_KEY, QUESTION, SCRIPT, proxy, written_text

EVENTS = [{"n": n} for n in range(3)]


@contextmanager
def gated_upstream(gate: threading.Event) -> Iterator[str]:
    """An SSE upstream that sends one event, then waits for `gate` before the rest."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for index, event in enumerate(EVENTS):
                if index == 1:
                    gate.wait(timeout=30)
                data = f"event: tick\ndata: {json.dumps(event)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        gate.set()
        server.shutdown()
        server.server_close()


def test_a_stream_reaches_the_client_event_by_event_and_replays_with_its_framing(
    tmp_path: Path,
) -> None:
    gate = threading.Event()
    with (
        gated_upstream(gate) as upstream,
        proxy(tmp_path, record_mode="once", upstreams=(upstream,)) as running,
    ):
        url = f"{running.url}/c/s/v1/chat/completions"
        with httpx.stream("POST", url, json={"stream": True}, timeout=30) as answer:
            lines = answer.iter_lines()
            # The first event arrives while the upstream still holds back the others.
            assert next(lines) == "event: tick"
            assert next(lines) == 'data: {"n": 0}'
            gate.set()
            rest = list(lines)
        recorded = load_cassette(tmp_path / "cassettes" / "s.json").interactions[0]
    assert [e.data for e in parse_sse("\n".join(rest))] == EVENTS[1:]
    assert recorded.response.events is not None
    assert [(e.event, e.data) for e in recorded.response.events] == [("tick", e) for e in EVENTS]
    with proxy(tmp_path, record_mode="none") as running:
        url = f"{running.url}/c/s/v1/chat/completions"
        with httpx.stream("POST", url, json={"stream": True}) as answer:
            chunks = [chunk for chunk in answer.iter_raw() if chunk]
    assert [parse_sse(c.decode())[0].data for c in chunks] == EVENTS  # one chunk per event


CURL = shutil.which("curl")
ANTHROPIC = {
    "model": "fcreplay-sim-careful",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": QUESTION}],
    "tools": [
        {
            "name": t["name"],
            "description": t["description"],
            "input_schema": t["parameters"],
        }
        for t in json.loads(CONTRACT.read_text(encoding="utf-8"))
    ],
}
GEMINI = {
    "contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
    "tools": [
        {
            "functionDeclarations": [
                {
                    "name": t["name"],
                    "description": t["description"],
                    "parametersJsonSchema": t["parameters"],
                }
                for t in json.loads(CONTRACT.read_text(encoding="utf-8"))
            ]
        }
    ],
}
GEMINI_PATH = "/v1beta/models/fcreplay-sim-careful"


def curl(url: str, body: dict[str, Any], *headers: str) -> str:
    command = [str(CURL), "-sS", "--fail-with-body", "-N", url, "--data-binary", "@-"]
    for header in ("content-type: application/json", *headers):
        command += ["-H", header]
    done = subprocess.run(
        command, input=json.dumps(body), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def curl_session(base: str) -> list[str]:
    """Anthropic and Gemini, streamed and not; the name of each tool called."""
    key = f"x-api-key: {FAKE_KEY}"
    plain = json.loads(curl(f"{base}/c/anthropic/v1/messages", ANTHROPIC, key))
    stream = curl(f"{base}/c/anthropic/v1/messages", {**ANTHROPIC, "stream": True}, key)
    started = [
        e.data["content_block"]["name"]
        for e in parse_sse(stream)
        if e.event == "content_block_start" and e.data["content_block"]["type"] == "tool_use"
    ]
    gemini = json.loads(
        curl(f"{base}/c/gemini{GEMINI_PATH}:generateContent?key={FAKE_KEY}", GEMINI)
    )
    sse = curl(
        f"{base}/c/gemini{GEMINI_PATH}:streamGenerateContent?alt=sse",
        GEMINI,
        f"x-goog-api-key: {FAKE_KEY}",
    )
    parts = [p for e in parse_sse(sse) for p in e.data["candidates"][0]["content"]["parts"]]
    return [
        *(block["name"] for block in plain["content"] if block["type"] == "tool_use"),
        *started,
        *(p["functionCall"]["name"] for p in gemini["candidates"][0]["content"]["parts"]),
        *(p["functionCall"]["name"] for p in parts if "functionCall" in p),
    ]


@pytest.mark.skipif(CURL is None, reason="no curl on this machine")
def test_curl_records_and_replays_anthropic_and_gemini_and_check_judges_them(
    tmp_path: Path,
) -> None:
    with (
        running_simulator(SCRIPT) as upstream,
        proxy(tmp_path, record_mode="once", upstreams=(upstream,)) as running,
    ):
        recorded = curl_session(running.url)
    assert recorded == ["get_order"] * 4
    with proxy(tmp_path, record_mode="none") as running:
        assert curl_session(running.url) == recorded
        assert dict(running.journal.counts) == {"replayed": 4}
    assert FAKE_KEY not in written_text(tmp_path)
    result = check_traffic(tmp_path / "cassettes", load_contract(CONTRACT), run_id="r")
    assert result.ok and len(result.records) == 4, result.summary()
    assert {r.adapter for r in result.records} == {"anthropic", "gemini"}


def test_routes_send_a_prefix_to_its_upstream_and_the_rest_by_adapter() -> None:
    table = parse_routes(
        ["http://default:1", "anthropic=http://claude:2"], ["/azure=http://az:3/openai,openai_chat"]
    )
    azure = table.resolve("/azure/deployments/x/chat/completions?api-version=1")
    assert (azure.adapter, azure.url, azure.path) == (
        "openai_chat",
        "http://az:3/openai/deployments/x/chat/completions?api-version=1",
        "/deployments/x/chat/completions?api-version=1",
    )
    assert table.resolve("/v1/messages").url == "http://claude:2/v1/messages"
    assert table.resolve("/v1/responses").url == "http://default:1/v1/responses"
    assert parse_routes([], []).resolve("/v1/models").url is None
    for upstreams, routes in ((["ftp://x"], []), (["nope=http://x"], []), ([], ["x=http://y"])):
        with pytest.raises(ValueError):
            parse_routes(upstreams, routes)


def test_cassette_names_from_a_header_or_a_prefix_stay_inside_the_folder(tmp_path: Path) -> None:
    selector = Selector(folder=tmp_path)
    chosen = selector.choose("/c/a%2Fb/v1/x", {})
    assert not isinstance(chosen, str)
    assert (chosen.path, chosen.target) == (tmp_path / "a" / "b.json", "/v1/x")
    header = selector.choose("/v1/x", {"x-fcreplay-cassette": "suite/test_one"})
    assert not isinstance(header, str) and header.path == tmp_path / "suite" / "test_one.json"
    for bad in ("../up", "/abs", "a/../b", ""):
        assert isinstance(selector.choose("/v1/x", {"x-fcreplay-cassette": bad}), str)
