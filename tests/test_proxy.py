"""`fcreplay proxy` before the simulator, driven by the official SDKs: record, replay, misses."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from fcreplay.cassettes.store import load_cassette
from fcreplay.runlog import read_run_log
from fcreplay.simulator.server import running_simulator

from .proxy_support import (
    FAKE_KEY,
    MODEL,
    QUESTION,
    SCRIPT,
    contract_tools,
    loopback_only,
    proxy,
    written_text,
)


def client(base: str, cassette: str | None = None) -> openai.OpenAI:
    headers = {"x-fcreplay-cassette": cassette} if cassette else None
    return openai.OpenAI(
        base_url=f"{base}/v1", api_key=FAKE_KEY, max_retries=0, default_headers=headers
    )


def ask(sdk: openai.OpenAI, *, stream: bool, **extra: Any) -> list[str]:
    """Ask the question; return the called tool names and arguments, as text."""
    messages: Any = [{"role": "user", "content": QUESTION}]
    tools: Any = extra.pop("tools", contract_tools())
    if not stream:
        answer = sdk.chat.completions.create(model=MODEL, messages=messages, tools=tools, **extra)
        calls = answer.choices[0].message.tool_calls or []
        return [f"{c.function.name} {c.function.arguments}" for c in calls]  # type: ignore[union-attr]
    names: dict[int, list[str]] = {}
    for chunk in sdk.chat.completions.create(
        model=MODEL, messages=messages, tools=tools, stream=True, **extra
    ):
        for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            parts = names.setdefault(call.index, ["", ""])
            parts[0] += (call.function and call.function.name) or ""
            parts[1] += (call.function and call.function.arguments) or ""
    return [f"{name} {arguments}" for name, arguments in names.values()]


WANTED = ['get_order {"order_id":"ORD-123456"}']


def test_record_once_then_replay_with_the_simulator_stopped_and_no_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        running_simulator(SCRIPT) as upstream,
        proxy(tmp_path, record_mode="once", upstreams=(upstream,)) as running,
    ):
        sdk = client(running.url, "orders/lookup")
        assert ask(sdk, stream=False) == WANTED
        assert ask(sdk, stream=True) == WANTED
    cassette = tmp_path / "cassettes" / "orders" / "lookup.json"
    recorded = load_cassette(cassette)
    assert [i.response.events is not None for i in recorded.interactions] == [False, True]
    assert recorded.meta is not None and recorded.meta.case_id == "orders/lookup"
    before = cassette.read_bytes()

    # Replay: no upstream, the simulator gone, and nothing but the proxy reachable.
    with proxy(tmp_path, record_mode="none") as running:
        refused = loopback_only(monkeypatch, int(running.url.rsplit(":", 1)[1]))
        sdk = client(running.url, "orders/lookup")
        assert ask(sdk, stream=False) == WANTED
        assert ask(sdk, stream=True) == WANTED
        assert dict(running.journal.counts) == {"replayed": 2}
    assert refused == []
    assert cassette.read_bytes() == before  # replay never rewrites a cassette
    logs = sorted((tmp_path / "runs").glob("*.jsonl"))
    records = [r for log in logs for r in read_run_log(log).records]
    assert len(records) == 4 and {r.verdict for r in records} == {"pass"}
    assert {(r.case_id, r.variant) for r in records} == {
        ("orders/lookup", "exchange-0"),
        ("orders/lookup", "exchange-1"),
    }
    assert all(r.signature and r.signature[1] == ("get_order",) for r in records)
    assert FAKE_KEY not in written_text(tmp_path)


def test_a_path_prefix_chooses_the_cassette_as_the_header_does(tmp_path: Path) -> None:
    with (
        running_simulator(SCRIPT) as upstream,
        proxy(tmp_path, record_mode="once", upstreams=(upstream,)) as running,
    ):
        assert ask(client(f"{running.url}/c/by-prefix"), stream=False) == WANTED
        answer = httpx.post(f"{running.url}/v1/chat/completions", json={"model": MODEL})
    assert (tmp_path / "cassettes" / "by-prefix.json").is_file()
    # Without a name the proxy cannot pick a file: a provider-shaped 400 says how to name one.
    assert answer.status_code == 400
    assert "x-fcreplay-cassette" in answer.json()["error"]["message"]


def test_a_miss_is_a_provider_error_naming_the_nearest_request_and_its_differences(
    tmp_path: Path,
) -> None:
    with (
        running_simulator(SCRIPT) as upstream,
        proxy(tmp_path, record_mode="once", upstreams=(upstream,)) as running,
    ):
        ask(client(running.url, "t"), stream=False)
    with proxy(tmp_path, record_mode="none") as running:
        with pytest.raises(openai.BadRequestError) as raised:
            ask(client(running.url, "t"), stream=False, temperature=0.5)
        assert dict(running.journal.counts) == {"miss": 1}
        (record,) = running.journal.records
    message = raised.value.message
    assert "the nearest recording, interaction 0, differs at" in message
    assert "/temperature: recorded (missing), now 0.5" in message
    assert record.verdict == "error" and record.replay_miss
    assert record.transport_error is not None and "/temperature" in record.transport_error.message


def test_sixteen_concurrent_clients_keep_their_exchanges_in_their_own_cassettes(
    tmp_path: Path,
) -> None:
    clients = 16
    together = threading.Barrier(clients)

    def one(number: int) -> list[str]:
        sdk = client(running.url, f"client-{number}")
        together.wait(timeout=30)  # every request in flight at once
        return ask(sdk, stream=number % 2 == 0, user=f"client-{number}") + ask(
            sdk, stream=False, user=f"client-{number}"
        )

    with (
        running_simulator(SCRIPT) as upstream,
        proxy(tmp_path, record_mode="once", upstreams=(upstream,)) as running,
        ThreadPoolExecutor(clients) as pool,
    ):
        answers = list(pool.map(one, range(clients)))
    assert answers == [WANTED * 2] * clients
    for number in range(clients):
        cassette = load_cassette(tmp_path / "cassettes" / f"client-{number}.json")
        users = [i.request.body["user"] for i in cassette.interactions]  # type: ignore[index]
        assert users == [f"client-{number}"] * 2


def test_no_key_the_client_sends_reaches_a_file(tmp_path: Path) -> None:
    keys = {
        "authorization": f"Bearer {FAKE_KEY}",
        "x-api-key": "anthropic-fake-key-0123456789",
        "x-goog-api-key": "AIzaFAKEgoogle0123456789abcdefghijklmnop",
    }
    with (
        running_simulator(SCRIPT) as upstream,
        proxy(tmp_path, record_mode="all", upstreams=(upstream,)) as running,
    ):
        body = {"model": MODEL, "messages": [{"role": "user", "content": QUESTION}]}
        url = f"{running.url}/c/keys/v1/chat/completions?key=query-fake-key-0123456789"
        assert httpx.post(url, json=body, headers=keys).status_code == 200
    text = written_text(tmp_path)
    assert "keys.json" in str(list((tmp_path / "cassettes").iterdir()))
    for value in [FAKE_KEY, *keys.values(), "query-fake-key-0123456789"]:
        assert value not in text


def test_a_cassette_that_would_hold_a_key_is_refused_and_not_written(tmp_path: Path) -> None:
    leaked = {"model": MODEL, "messages": [{"role": "user", "content": f"my key {FAKE_KEY}"}]}
    with (
        running_simulator(SCRIPT) as upstream,
        proxy(tmp_path, record_mode="once", upstreams=(upstream,)) as running,
    ):
        answer = httpx.post(
            f"{running.url}/c/leak/v1/chat/completions",
            content=json.dumps(leaked),
            headers={"content-type": "application/json"},
        )
        assert answer.status_code == 404  # the simulator's own answer, passed through
        assert running.service.refused and "key-shaped" in running.service.refused[0]
    assert not (tmp_path / "cassettes" / "leak.json").exists()
    assert FAKE_KEY not in written_text(tmp_path)


def test_one_cassette_file_for_all_and_new_episodes_adds_what_did_not_match(
    tmp_path: Path,
) -> None:
    single = tmp_path / "all.json"
    with running_simulator(SCRIPT) as upstream:
        with proxy(
            tmp_path, cassette_dir=None, cassette=single, record_mode="once", upstreams=(upstream,)
        ) as running:
            ask(client(running.url, "ignored"), stream=False)
        with proxy(
            tmp_path,
            cassette_dir=None,
            cassette=single,
            record_mode="new_episodes",
            upstreams=(upstream,),
        ) as running:
            ask(client(running.url), stream=False)  # matches: replayed
            ask(client(running.url), stream=False, temperature=0)  # new: recorded and added
            assert dict(running.journal.counts) == {"replayed": 1, "recorded": 1}
    bodies = [i.request.body for i in load_cassette(single).interactions]
    assert [b.get("temperature") for b in bodies] == [None, 0]  # type: ignore[union-attr]
    assert not (tmp_path / "cassettes").exists()
