"""The loopback simulator over real HTTP on 127.0.0.1: four wire formats, script, faults, CLI.

Requests are built with each adapter's `build_request` from the example contract and
answers parsed back with `parse_decision` / `parse_stream`, so these tests exercise
the adapters' simulator side (`read_request`, `render_response`, `render_error`) too.
Everything stays on the loopback interface; no test sleeps.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.adapters.registry import BUILT_IN, get_adapter
from fcreplay.cassettes.framing import decode as decode_stream
from fcreplay.cassettes.framing import framing_of
from fcreplay.cli import run
from fcreplay.decision import Decision, ProviderError
from fcreplay.errors import InputError
from fcreplay.inputs.cases import Case, load_cases
from fcreplay.inputs.contract import Contract
from fcreplay.inputs.tool_results import FakeExecutor, load_executor
from fcreplay.judge.expectations import judge_expectation
from fcreplay.neutral import (
    HistoryItem,
    Message,
    RequestSettings,
    RequestView,
    StreamEvent,
    ToolChoice,
)
from fcreplay.simulator.server import (
    Answer,
    Profile,
    ScriptedCall,
    base_urls,
    choose_answer,
    load_script,
    parse_script,
    running_simulator,
)

from .conftest import CASES, ROOT

SCRIPT = ROOT / "cases" / "delivery_simulator.json"
RESULTS = ROOT / "cases" / "delivery_results.json"
PROMPT = (ROOT / "contracts" / "delivery_prompt.txt").read_text(encoding="utf-8").strip()
CAREFUL, HASTY = "fcreplay-sim-careful", "fcreplay-sim-hasty"
NAMES = tuple(BUILT_IN)
WITH_PARALLEL_KNOB = ("openai_chat", "openai_responses", "anthropic")
FORCING = tuple(n for n in NAMES if "forced" in get_adapter(n).CAPABILITIES.tool_choice_modes)
"""Ollama's native API cannot force a tool (its lint says so)."""
"""Gemini documents no parallel-call toggle, so its requests never ask for one call a turn."""


@pytest.fixture(scope="module")
def cases(contract: Contract) -> dict[str, Case]:
    return {case.id: case for case in load_cases(CASES, contract)}


@pytest.fixture(scope="module")
def executor(contract: Contract) -> FakeExecutor:
    return load_executor(RESULTS, contract)


Connect = Callable[[str, str], "Client"]


@pytest.fixture
def connect(contract: Contract) -> Iterator[Connect]:
    """Make clients for a simulator URL and adapter name; their connections close after."""
    clients: list[Client] = []

    def make(url: str, name: str) -> Client:
        clients.append(Client(url, name, contract))
        return clients[-1]

    yield make
    for client in clients:
        client.http.close()


@pytest.fixture(scope="module")
def example_url() -> Iterator[str]:
    """One simulator for the tests whose answers do not depend on repetition counts."""
    with running_simulator(SCRIPT) as url:
        yield url


class Client:
    """Talks to a running simulator through one adapter, as the recorder would."""

    def __init__(self, url: str, name: str, contract: Contract) -> None:
        self.adapter: ClientAdapter = get_adapter(name)
        self.base = base_urls(url)[name]
        self.contract = contract
        self.http = httpx.Client(timeout=10)

    def send(
        self,
        model: str,
        history: Sequence[HistoryItem],
        settings: RequestSettings | None = None,
        tools: bool = True,
        reverse: bool = False,
        path: str | None = None,
    ) -> httpx.Response:
        specs = list(self.contract.tools) if tools else []
        request = self.adapter.build_request(
            model, history, specs[::-1] if reverse else specs, settings or RequestSettings()
        )
        return self.http.post(
            self.base + (path or request.path), json=request.body, headers=request.headers
        )

    def parse(self, response: httpx.Response) -> Decision | ProviderError:
        framing = framing_of(response.headers["content-type"])
        if framing is not None:
            events = list(decode_stream(framing, response.content))
            return self.adapter.parse_stream(response.status_code, events)
        return self.adapter.parse_decision(response.status_code, response.json())

    def ask(self, model: str, history: Sequence[HistoryItem], **options: Any) -> Decision:
        answer = self.parse(self.send(model, history, **options))
        assert isinstance(answer, Decision), answer
        return answer

    def converse(
        self,
        model: str,
        user: str,
        executor: FakeExecutor,
        settings: RequestSettings | None = None,
        steps: int = 4,
    ) -> list[Decision]:
        """Run one conversation until the model stops calling (or `steps` turns)."""
        history: list[HistoryItem] = [Message("system", PROMPT), Message("user", user)]
        decisions = []
        for _ in range(steps):
            decision = self.ask(model, history, settings=settings)
            decisions.append(decision)
            if decision.kind != "tool_call":
                break
            results = [executor.execute(call).result for call in decision.calls]
            history = self.adapter.append_tool_result(history, decision, results)
        return decisions


def stream_events(response: httpx.Response) -> list[StreamEvent]:
    """The events of a streamed answer, in the framing its content type names."""
    framing = framing_of(response.headers["content-type"])
    assert framing is not None, response.headers
    return list(decode_stream(framing, response.content))


def opening(user: str) -> list[HistoryItem]:
    return [Message("system", PROMPT), Message("user", user)]


def without_ids(decision: Decision) -> Decision:
    """The decision with call ids blanked: they carry the repetition number."""
    return replace(decision, calls=tuple(replace(c, call_id=None) for c in decision.calls))


def arguments(decision: Decision) -> list[dict[str, Any]]:
    """The decoded arguments of every call (all of them must be JSON objects)."""
    found = []
    for call in decision.calls:
        assert call.arguments is not None, call
        found.append(call.arguments)
    return found


# --- the example script over the four wire formats --------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["body", "sse"])
@pytest.mark.parametrize("name", NAMES)
def test_careful_profile_meets_every_case(
    example_url: str,
    name: str,
    stream: bool,
    contract: Contract,
    cases: dict[str, Case],
    executor: FakeExecutor,
    connect: Connect,
) -> None:
    client = connect(example_url, name)
    for case in cases.values():
        decisions = client.converse(
            CAREFUL, case.messages[-1].content, executor, RequestSettings(stream=stream)
        )
        assert judge_expectation(decisions[0], case.expect, contract) == [], case.id
        # Bedrock Converse answers never name the model they came from.
        assert decisions[0].model == (None if name == "bedrock_converse" else CAREFUL)
        if case.expect.kind == "tool_call":
            assert len(decisions) == 2, case.id  # calls, then one answer from the results
        if case.then is not None:
            failed = any(r.is_error for r in _results(decisions[0], executor))
            findings = judge_expectation(decisions[1], case.then, contract, after_error=failed)
            assert findings == [], (case.id, findings)


def _results(decision: Decision, executor: FakeExecutor) -> list[Any]:
    return [executor.execute(call).result for call in decision.calls]


@pytest.mark.parametrize("name", NAMES)
def test_streamed_and_plain_answers_are_the_same_decision(name: str, connect: Connect) -> None:
    user = "Где заказы ORD-123456 и ORD-222333?"
    with running_simulator(SCRIPT) as url:
        client = connect(url, name)
        plain = client.ask(CAREFUL, opening(user))
        streamed = client.ask(CAREFUL, opening(user), settings=RequestSettings(stream=True))
    assert [call.name for call in plain.calls] == ["get_order", "get_order"]
    assert [call.call_id for call in plain.calls] == ["fcsim_r0_t0_0", "fcsim_r0_t0_1"]
    # The stream flag is not part of the repetition key (except in Gemini's and
    # Bedrock's paths).
    second = 0 if name in ("gemini", "bedrock_converse") else 1
    assert streamed.calls[1].call_id == f"fcsim_r{second}_t0_1"
    assert without_ids(plain) == without_ids(streamed)


@pytest.mark.parametrize("name", WITH_PARALLEL_KNOB)
def test_parallel_false_spreads_the_calls_over_turns(
    example_url: str, name: str, executor: FakeExecutor, connect: Connect
) -> None:
    client = connect(example_url, name)
    settings = RequestSettings(parallel_tool_calls=False)
    decisions = client.converse(
        CAREFUL,
        "Где мой заказ ORD-123456? И заодно посчитай express из Казани в Самару, 1 кг",
        executor,
        settings,
    )
    assert [[call.name for call in d.calls] for d in decisions] == [
        ["get_order"],
        ["quote_delivery"],
        [],
    ]
    assert decisions[1].calls[0].arguments == {
        "origin": "Казань",
        "destination": "Самара",
        "weight_kg": 1,
        "service": "express",
    }
    assert "не удалось" in (decisions[2].text or "")


def test_gemini_has_no_parallel_knob_so_both_calls_come_at_once(
    example_url: str, connect: Connect
) -> None:
    client = connect(example_url, "gemini")
    settings = RequestSettings(parallel_tool_calls=False)
    decision = client.ask(
        CAREFUL, opening("Где заказы ORD-123456 и ORD-222333?"), settings=settings
    )
    assert len(decision.calls) == 2


def test_gemini_stream_without_alt_sse_is_one_json_array(
    example_url: str, connect: Connect
) -> None:
    client = connect(example_url, "gemini")
    history = opening("Где заказ ORD-123456?")
    path = f"/v1beta/models/{CAREFUL}:streamGenerateContent"
    response = client.send(CAREFUL, history, RequestSettings(stream=True), path=path)
    assert response.headers["content-type"].startswith("application/json")
    chunks = response.json()
    assert isinstance(chunks, list) and len(chunks) > 1
    whole = client.adapter.parse_decision(200, chunks)
    assert isinstance(whole, Decision)
    assert without_ids(whole) == without_ids(client.ask(CAREFUL, history))


# --- repetitions ------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_hasty_answers_vary_between_repetitions(
    name: str, executor: FakeExecutor, connect: Connect
) -> None:
    with running_simulator(SCRIPT) as url:
        client = connect(url, name)
        runs = [client.converse(HASTY, "Где мой заказ?", executor) for _ in range(4)]
    kinds = [[d.kind for d in run] for run in runs]
    assert kinds == [["text"], ["tool_call", "text"], ["text"], ["text"]]
    assert runs[1][0].calls[0].arguments == {"order_id": "ORD-100001"}  # invented
    assert runs[3] == runs[0]  # the list is taken cyclically


def test_interleaved_repetitions_keep_their_own_story(
    executor: FakeExecutor, connect: Connect
) -> None:
    """The second turn follows its own first turn, read back from the call ids."""
    user = "Посчитай express из Казани в Самару, 2,5 кг"
    with running_simulator(SCRIPT) as url:
        client = connect(url, "openai_chat")
        first = client.ask(HASTY, opening(user))
        second = client.ask(HASTY, opening(user))
        assert arguments(first)[0] == arguments(second)[0] | {"weight_kg": "2,5"}
        assert arguments(second)[0]["weight_kg"] == 2.5
        later = {}
        for label, decision in (("second", second), ("first", first)):
            history = client.adapter.append_tool_result(
                opening(user), decision, _results(decision, executor)
            )
            later[label] = client.ask(HASTY, history)
    # Repetition 1 retries with a number; repetition 2 claims a price (a false success).
    assert arguments(later["first"]) == [
        {"origin": "Казань", "destination": "Самара", "weight_kg": 2.5, "service": "express"}
    ]
    assert "₽" in (later["second"].text or "")


def test_a_different_tool_order_counts_its_own_repetitions(connect: Connect) -> None:
    with running_simulator(SCRIPT) as url:
        client = connect(url, "anthropic")
        first = client.ask(HASTY, opening("Где мой заказ?"))
        reversed_first = client.ask(HASTY, opening("Где мой заказ?"), reverse=True)
    assert first == reversed_first and first.kind == "text"


# --- tool-choice variants ------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_requests_without_usable_tools_never_get_calls(
    example_url: str, name: str, connect: Connect
) -> None:
    client = connect(example_url, name)
    quote = "Посчитай express из Казани в Самару, 2,5 кг"
    no_tools = client.ask(CAREFUL, opening(quote), tools=False)
    assert no_tools.kind == "text" and "не могу" in (no_tools.text or "")
    none = client.ask(CAREFUL, opening(quote), settings=RequestSettings(ToolChoice("none")))
    assert none == no_tools
    lookup = client.ask(CAREFUL, opening("Где заказ ORD-000001?"), tools=False)
    assert lookup.kind == "text" and "нет доступа" in (lookup.text or "")  # fallback_text


def test_no_tools_falls_back_to_a_call_free_entry_of_the_turn(connect: Connect) -> None:
    with running_simulator(SCRIPT) as url:
        client = connect(url, "openai_chat")
        for _ in range(2):  # the second repetition's scripted entry is a call
            decision = client.ask(HASTY, opening("Где мой заказ?"), tools=False)
            assert decision.kind == "text" and not decision.calls


@pytest.mark.parametrize("name", FORCING)
def test_forced_tool_gets_the_scripted_call(example_url: str, name: str, connect: Connect) -> None:
    client = connect(example_url, name)
    settings = RequestSettings(ToolChoice("forced", "quote_delivery"))
    user = "Где мой заказ ORD-123456? И заодно посчитай express из Казани в Самару, 1 кг"
    decision = client.ask(CAREFUL, opening(user), settings=settings)
    assert [call.name for call in decision.calls] == ["quote_delivery"]
    assert arguments(decision)[0]["weight_kg"] == 1
    # A tool the script never calls in this case is still called, with no arguments.
    settings = RequestSettings(ToolChoice("forced", "cancel_order"))
    decision = client.ask(CAREFUL, opening("Где мой заказ?"), settings=settings)
    assert [(c.name, c.arguments) for c in decision.calls] == [("cancel_order", {})]


def test_forcing_an_undeclared_tool_is_a_bad_request(
    example_url: str, contract: Contract, connect: Connect
) -> None:
    client = connect(example_url, "openai_responses")
    request = client.adapter.build_request(
        CAREFUL,
        opening("Где заказ ORD-123456?"),
        [contract.tools[0]],
        RequestSettings(ToolChoice("forced", "cancel_order")),
    )
    response = client.http.post(client.base + request.path, json=request.body)
    error = client.parse(response)
    assert isinstance(error, ProviderError) and error.status == 400 and not error.retryable


def view(**fields: Any) -> RequestView:
    defaults: dict[str, Any] = {
        "model": "m",
        "last_user_text": "u",
        "tool_result_turns": 0,
        "tool_names": ("a", "b"),
        "tool_choice": ToolChoice(),
        "parallel_tool_calls": None,
        "stream": False,
    }
    return RequestView(**(defaults | fields))


def test_choice_rules_for_undeclared_tools_required_and_past_the_script() -> None:
    profile = Profile(
        turns=(
            (Answer(text="checking", calls=(ScriptedCall("b", {"x": 1}),)),),
            (Answer(text="done"),),
        )
    )
    assert choose_answer(profile, view(tool_names=("a",)), 0, "F") == Answer(text="checking")
    only_b = choose_answer(profile, view(tool_names=("b",)), 0, "F")
    assert only_b.calls == (ScriptedCall("b", {"x": 1}),)
    required = choose_answer(
        profile, view(tool_result_turns=1, tool_choice=ToolChoice("required")), 0, "F"
    )
    assert required == Answer(calls=(ScriptedCall("b", {"x": 1}),))
    assert choose_answer(profile, view(tool_result_turns=2), 0, "F") == Answer(text="F")
    split = Profile(
        turns=((Answer(text="t", calls=(ScriptedCall("a", {}), ScriptedCall("b", {}))),),)
    )
    assert choose_answer(split, view(parallel_tool_calls=False), 0, "F") == Answer(
        text="t", calls=(ScriptedCall("a", {}),)
    )
    second = choose_answer(split, view(parallel_tool_calls=False, tool_result_turns=1), 0, "F")
    assert second == Answer(calls=(ScriptedCall("b", {}),))


# --- invalid arguments ------------------------------------------------------------------

BROKEN = {
    "cases": {
        "broken": {
            "user": "Где заказ ORD-123456?",
            "profiles": {
                "*": {
                    "turns": [
                        {"calls": [{"name": "get_order", "raw_arguments": '{"order_id": "ORD'}]}
                    ]
                }
            },
        }
    }
}


@pytest.mark.parametrize("stream", [False, True], ids=["body", "sse"])
@pytest.mark.parametrize("name", NAMES)
def test_raw_arguments_come_back_invalid_in_every_format(
    name: str, stream: bool, connect: Connect
) -> None:
    with running_simulator(BROKEN) as url:
        client = connect(url, name)
        decision = client.ask(
            "any-model", opening("Где заказ ORD-123456?"), settings=RequestSettings(stream=stream)
        )
    assert decision.kind == "invalid"
    expected_stop = get_adapter(name).CAPABILITIES.broken_call_stop
    if get_adapter(name).CAPABILITIES.string_arguments:
        expected_stop = "tool_call"
    assert decision.stop == expected_stop
    if name.startswith("openai"):
        assert [c.raw_arguments for c in decision.calls] == ['{"order_id": "ORD']


# --- faults -----------------------------------------------------------------------------


def faulty(*faults: dict[str, Any]) -> dict[str, Any]:
    script: dict[str, Any] = json.loads(SCRIPT.read_text(encoding="utf-8"))
    script["cases"]["direct_lookup"]["faults"] = list(faults)
    return script


LOOKUP = "Где заказ ORD-123456?"


@pytest.mark.parametrize("name", NAMES)
def test_rate_limit_with_retry_after_then_success(name: str, connect: Connect) -> None:
    with running_simulator(faulty({"kind": "error", "status": 429, "retry_after": 2})) as url:
        client = connect(url, name)
        limited = client.send(CAREFUL, opening(LOOKUP))
        retried = client.ask(CAREFUL, opening(LOOKUP))
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    error = client.parse(limited)
    assert isinstance(error, ProviderError) and error.status == 429 and error.retryable
    if name == "gemini":
        assert error.retry_after == 2.0  # RetryInfo in the body
        assert "RetryInfo" in limited.text
    assert retried.kind == "tool_call"
    assert retried.calls[0].call_id == "fcsim_r0_t0_0"  # the fault did not use a repetition


@pytest.mark.parametrize("status", [500, 529])
@pytest.mark.parametrize("name", NAMES)
def test_server_errors_fire_count_times(name: str, status: int, connect: Connect) -> None:
    with running_simulator(faulty({"kind": "error", "status": status, "count": 2})) as url:
        client = connect(url, name)
        answers = [client.parse(client.send(CAREFUL, opening(LOOKUP))) for _ in range(3)]
    statuses = [a.status if isinstance(a, ProviderError) else "ok" for a in answers]
    assert statuses == [status, status, "ok"]
    assert all(a.retryable for a in answers if isinstance(a, ProviderError))


def test_an_error_event_inside_a_stream(connect: Connect) -> None:
    fault = {"kind": "error", "status": 529, "in_stream": True}
    with running_simulator(faulty(fault)) as url:
        client = connect(url, "anthropic")
        response = client.send(CAREFUL, opening(LOOKUP), RequestSettings(stream=True))
    assert response.status_code == 200
    error = client.parse(response)
    assert isinstance(error, ProviderError) and error.status == 529 and error.retryable


@pytest.mark.parametrize("stream", [False, True], ids=["body", "sse"])
@pytest.mark.parametrize("name", NAMES)
def test_malformed_json_then_success(name: str, stream: bool, connect: Connect) -> None:
    with running_simulator(faulty({"kind": "malformed_json"})) as url:
        client = connect(url, name)
        broken = client.send(CAREFUL, opening(LOOKUP), RequestSettings(stream=stream))
        fine = client.send(CAREFUL, opening(LOOKUP), RequestSettings(stream=stream))
    assert broken.status_code == 200
    if stream:
        events = stream_events(broken)
        assert any(isinstance(event.data, str) and event.data.startswith("{") for event in events)
    else:
        with pytest.raises(json.JSONDecodeError):
            json.loads(broken.text)
    assert isinstance(client.parse(fine), Decision)


@pytest.mark.parametrize("name", NAMES)
def test_truncated_stream_ends_before_its_terminal_event(name: str, connect: Connect) -> None:
    settings = RequestSettings(stream=True)
    with running_simulator(faulty({"kind": "truncated_stream"})) as url:
        client = connect(url, name)
        plain = client.send(CAREFUL, opening(LOOKUP))  # not a stream: the fault waits
        cut = client.send(CAREFUL, opening(LOOKUP), settings)
        whole = client.send(CAREFUL, opening(LOOKUP), settings)
    assert plain.status_code == 200 and "content-length" in plain.headers
    cut_events, whole_events = stream_events(cut), stream_events(whole)
    assert cut.status_code == 200 and cut.headers["connection"] == "close"
    assert len(cut_events) == len(whole_events) // 2
    assert cut_events == whole_events[: len(cut_events)]
    truncated = client.parse(cut)
    assert truncated != client.parse(whole)
    assert not (isinstance(truncated, Decision) and truncated.kind == "tool_call")


def test_delay_fault_and_filters(connect: Connect) -> None:
    fault = {"kind": "delay", "seconds": 0.1, "api": "gemini", "count": "all"}
    with running_simulator(faulty(fault)) as url:
        gemini, chat = connect(url, "gemini"), connect(url, "openai_chat")
        timings = []
        for client in (gemini, gemini, chat):
            started = time.perf_counter()
            client.ask(CAREFUL, opening(LOOKUP))
            timings.append(time.perf_counter() - started)
    assert timings[0] >= 0.1 and timings[1] >= 0.1  # every matching request
    assert timings[2] < 0.1  # another API


def test_global_faults_apply_to_every_case(connect: Connect) -> None:
    script = json.loads(SCRIPT.read_text(encoding="utf-8"))
    script["faults"] = [{"kind": "error", "status": 503, "turn": 0, "model": CAREFUL}]
    with running_simulator(script) as url:
        client = connect(url, "openai_chat")
        hasty = client.ask(HASTY, opening("Где мой заказ?"))
        first = client.parse(client.send(CAREFUL, opening("Где мой заказ?")))
        second = client.parse(client.send(CAREFUL, opening(LOOKUP)))
    assert hasty.kind == "text"
    assert isinstance(first, ProviderError) and first.status == 503
    assert isinstance(second, Decision)


# --- concurrency ------------------------------------------------------------------------


def test_latency_does_not_serialize_concurrent_requests(contract: Contract) -> None:
    adapter = get_adapter("openai_chat")
    request = adapter.build_request(CAREFUL, opening(LOOKUP), contract.tools, RequestSettings())
    limits = httpx.Limits(max_connections=16)
    with running_simulator(SCRIPT, latency=0.05) as url, httpx.Client(limits=limits) as http:
        target = base_urls(url)["openai_chat"] + request.path

        def post(_: int) -> float:
            started = time.perf_counter()
            response = http.post(target, json=request.body)
            assert response.status_code == 200
            return time.perf_counter() - started

        with ThreadPoolExecutor(16) as pool:
            started = time.perf_counter()
            each = list(pool.map(post, range(16)))
            total = time.perf_counter() - started
    assert min(each) >= 0.05  # the latency was applied to every answer
    # Serialized they would take 16 x 50 ms = 0.8 s; concurrently about 0.07 s.
    assert total < 0.5, f"16 requests at 50 ms took {total:.3f} s"


# --- what is not scripted ---------------------------------------------------------------


def test_unknown_path_and_bad_bodies(
    example_url: str, contract: Contract, connect: Connect
) -> None:
    missing = httpx.post(example_url + "/v1/embeddings", json={})
    assert missing.status_code == 404 and "no provider API" in missing.json()["error"]["message"]
    for name in NAMES:
        client = connect(example_url, name)
        request = client.adapter.build_request(
            CAREFUL, opening(LOOKUP), contract.tools, RequestSettings()
        )
        bad = client.http.post(client.base + request.path, content=b"{not json")
        error = client.parse(bad)
        assert isinstance(error, ProviderError) and error.status == 400, name
        unscripted = client.parse(client.send(CAREFUL, opening("Привет!")))
        assert isinstance(unscripted, ProviderError) and unscripted.status == 404
        assert "no scripted case" in unscripted.message
        stranger = client.parse(client.send("gpt-unknown", opening(LOOKUP)))
        assert isinstance(stranger, ProviderError) and stranger.status == 404
        assert CAREFUL in stranger.message
    info = httpx.get(example_url + "/").json()
    assert "never a source of claims" in info["note"] and len(info["cases"]) == 13


def test_a_post_without_length_and_a_get_off_the_root_are_plain_errors(example_url: str) -> None:
    address = urlsplit(example_url)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=10)
    connection.putrequest("POST", "/v1/chat/completions")
    connection.endheaders()  # no Content-Length header and no body
    reply = connection.getresponse()
    assert reply.status == 411 and reply.getheader("x-fcreplay-simulator") == "synthetic"
    assert json.loads(reply.read())["error"]["message"] == "a request body needs Content-Length"
    connection.close()
    elsewhere = httpx.get(example_url + "/status?x=1")
    assert elsewhere.status_code == 404
    assert elsewhere.json()["error"]["message"] == "no resource at GET /status?x=1"


# --- the script file --------------------------------------------------------------------


def test_example_script_covers_every_case_with_both_profiles(cases: dict[str, Case]) -> None:
    script = load_script(SCRIPT)
    assert "SYNTHETIC" in json.loads(SCRIPT.read_text(encoding="utf-8"))["note"]
    assert {case.id: case.user for case in script.cases} == {
        case.id: case.messages[-1].content for case in cases.values()
    }
    for case in script.cases:
        assert set(case.profiles) == {CAREFUL, HASTY}


def test_script_errors_name_the_file_line_and_key(tmp_path: Path) -> None:
    bad = {
        "faults": [{"kind": "error"}],
        "cases": {
            "a": {
                "user": "u",
                "profiles": {
                    "m": {
                        "turns": [
                            {"calls": [{"name": "x", "arguments": [1]}]},
                            [{"text": "ok"}, {"refusal": "no", "text": "t"}],
                        ],
                        "forced": {"y": {"text": "t"}},
                        "no_tools": {"calls": [{"name": "x", "raw_arguments": "{}"}]},
                    }
                },
            },
            "b": {"user": " u ", "profiles": {"*": {"turns": [{"txt": "t"}]}}},
            "bad id!": {"user": "v", "profiles": {}},
        },
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(bad, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_script(path)
    shown = [str(problem) for problem in caught.value.problems]
    expected = [
        "faults[0].status: required for error faults",
        "cases.a.profiles.m.turns[0].calls[0].arguments: must be a JSON object",
        "cases.a.profiles.m.turns[1][1]: a refusal stands alone",
        "cases.a.profiles.m.no_tools.calls[0].raw_arguments: must be text that is not a JSON",
        "cases.a.profiles.m.forced.y: must call 'y'",
        "cases.b.profiles.*.turns[0].txt: unknown key",
        "cases.b.profiles.*.turns[0]: an answer needs",
        "cases.bad id!: case id must match",
        "cases.bad id!.profiles: required",
    ]
    for fragment in expected:
        assert any(fragment in line for line in shown), (fragment, shown)
    assert all(re.match(rf"{re.escape(str(path))}:\d+: ", line) for line in shown), shown


def test_two_cases_with_the_same_user_text_are_refused() -> None:
    turns = {"*": {"turns": [{"text": "t"}]}}
    document = {
        "cases": {"a": {"user": "u", "profiles": turns}, "b": {"user": "u ", "profiles": turns}}
    }
    with pytest.raises(InputError, match=r"cases\.b\.user: same user message as case 'a'"):
        parse_script(document)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ({"kind": "boom"}, "kind: must be one of error"),
        ({"kind": "delay", "seconds": 0}, "seconds: must be seconds (> 0)"),
        ({"kind": "error", "status": 200}, "status: must be an HTTP status"),
        ({"kind": "error", "status": 429, "count": 0}, "count: must be a whole number"),
        ({"kind": "malformed_json", "api": "cohere"}, "api: must be one of"),
        ({"kind": "delay", "seconds": 1, "retry_after": 1}, "retry_after: unknown key"),
    ],
)
def test_bad_faults_are_named(fault: dict[str, Any], message: str) -> None:
    document = {
        "faults": [fault],
        "cases": {"a": {"user": "u", "profiles": {"*": {"turns": [{"text": "t"}]}}}},
    }
    with pytest.raises(InputError) as caught:
        parse_script(document, source="s.json")
    assert any(message in str(p) for p in caught.value.problems), caught.value.problems


# --- the command line -------------------------------------------------------------------


def test_simulate_command_prints_its_url_and_stops_cleanly_on_ctrl_c(suite_dir: Path) -> None:
    config = suite_dir / "fcreplay.toml"
    assert 'simulator_script = "cases/delivery_simulator.json"' in config.read_text("utf-8")
    command = [sys.executable, "-m", "fcreplay", "simulate", "--port", "0", "--config", str(config)]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        # As from a terminal: a shell starts background jobs with SIGINT ignored, and a
        # Python started so leaves it ignored (pytest run with `&` would hang here).
        preexec_fn=_default_sigint,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        assert found, line
        url = found.group(1)
        assert "synthetic" in line and f"openai_chat {url}/v1" in line
        assert f"anthropic {url}," in line and f"gemini {url}," in line
        assert f"bedrock_converse {url}," in line and f"ollama {url};" in line
        info = httpx.get(url + "/", timeout=5).json()
        assert info["script"].endswith("delivery_simulator.json") and len(info["cases"]) == 13
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_simulate_without_a_script_says_to_pass_one(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = suite_dir / "fcreplay.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('simulator_script = "cases/delivery_simulator.json"', ""))
    code = run(["simulate", "--config", str(config), "--port", "0"])
    assert code == 2
    assert "--script" in capsys.readouterr().err


def test_simulate_reports_a_bad_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "script.json"
    path.write_text('{"cases": {}}', encoding="utf-8")
    assert run(["simulate", "--script", str(path), "--port", "0"]) == 2
    assert f"{path}:1: cases: required" in capsys.readouterr().err
