"""Client traffic core: record modes, matching with readable misses, redaction, judging."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from fcreplay.canonical import sorted_json
from fcreplay.cassettes.store import load_cassette
from fcreplay.errors import InputError, SecretLeakError
from fcreplay.inputs.contract import Contract
from fcreplay.neutral import StreamEvent, WireResponse
from fcreplay.traffic.cassette import traffic_meta
from fcreplay.traffic.judging import history_problems, model_exchanges, tool_drifts
from fcreplay.traffic.matching import Miss
from fcreplay.traffic.player import Live, Replayed, TrafficPlayer, parse_record_mode
from fcreplay.traffic.records import Conversation, exchange_records
from fcreplay.traffic.wire import ClientRequest, read_response, reply_of

URL = "http://127.0.0.1:9/v1/chat/completions"
META = traffic_meta("pytest/test_x", "test_y")


def chat(content: str, **extra: Any) -> ClientRequest:
    body = {"model": "m", "messages": [{"role": "user", "content": content}], **extra}
    headers = {"authorization": "Bearer sk-test-0123456789abcdefXYZ", "content-type": "json"}
    return ClientRequest("POST", URL, headers, json.dumps(body).encode())


def answer(text: str) -> WireResponse:
    body = {"choices": [{"message": {"role": "assistant", "content": text}}]}
    return WireResponse(200, {"content-type": "application/json"}, body)


def record(path: Path, *requests: ClientRequest) -> None:
    player = TrafficPlayer(path, META, "once")
    for request in requests:
        assert isinstance(player.lookup(request), Live)
        player.keep(request, answer(request.body()["messages"][0]["content"]))
    assert player.save()


def test_once_records_a_new_cassette_then_replays_it_in_order(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, chat("a"), chat("a"), chat("b"))
    text = path.read_text(encoding="utf-8")
    assert "sk-test" not in text and "authorization" not in text
    assert [i.label for i in load_cassette(path).interactions] == [
        {"exchange": n, "api": "openai_chat"} for n in range(3)
    ]
    player = TrafficPlayer(path, META, "once")
    found = [player.lookup(chat(t)) for t in ("b", "a", "a")]
    assert [f.index for f in found if isinstance(f, Replayed)] == [2, 0, 1]
    # Each recorded interaction answers once: a fourth identical request misses.
    again = player.lookup(chat("a"))
    assert isinstance(again, Miss) and "already answered" in again.message
    assert not player.save() and path.read_text(encoding="utf-8") == text


def test_the_earliest_equal_recording_answers_whatever_its_key_order(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    reordered = {"messages": [{"content": "a", "role": "user"}], "model": "m", "top_p": 1}
    exact = {"model": "m", "messages": [{"role": "user", "content": "a"}], "top_p": 1}
    flag = {"model": "m", "messages": [{"role": "user", "content": "a"}], "top_p": True}
    record(
        path, *(ClientRequest("POST", URL, {}, json.dumps(b).encode()) for b in (reordered, exact))
    )
    player = TrafficPlayer(path, META, "none")
    sent = [ClientRequest("POST", URL, {}, json.dumps(b).encode()) for b in (exact, exact, flag)]
    found = [player.lookup(request) for request in sent]
    # The same value with its keys in another order was recorded first: it answers first.
    assert [f.index for f in found[:2] if isinstance(f, Replayed)] == [0, 1]
    # `true` is not `1`, though Python's `==` says it is.
    assert isinstance(found[2], Miss) and found[2].differences == ("/top_p: recorded 1, now true",)


def test_bytes_sent_as_recorded_answer_in_order_without_being_parsed(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    reordered = {"messages": [{"content": "a", "role": "user"}], "model": "m"}
    exact = {"model": "m", "messages": [{"role": "user", "content": "a"}]}

    def compact(body: dict[str, Any]) -> ClientRequest:
        # As SDKs send JSON: the bytes a cassette's body is written back as, keys in order.
        return ClientRequest("POST", URL, {}, json.dumps(body, separators=(",", ":")).encode())

    record(path, compact(exact), compact(reordered), compact(exact))
    player = TrafficPlayer(path, META, "none")
    sent = [compact(exact) for _ in range(3)]
    found = [player.lookup(request) for request in sent]
    assert [f.index for f in found if isinstance(f, Replayed)] == [0, 1, 2]
    # The first and the last were their recordings' bytes with none unplayed before them;
    # the second had to be compared with the reordered recording, which answered it.
    assert ["_body" in request.__dict__ for request in sent] == [False, True, False]
    # A recorded NaN (a YAML cassette may hold one) is written as `null` in the bytes
    # compared: the same bytes, not the same value.
    player = TrafficPlayer(path, META, "none")
    player.recorded[0].request.body["temperature"] = float("nan")
    missed = player.lookup(compact({**exact, "temperature": None}))
    assert isinstance(missed, Miss) and missed.nearest == 0


def test_cassettes_of_one_tool_list_share_it_and_hash_each_body_as_sent(tmp_path: Path) -> None:
    tools = [{"type": "function", "function": {"name": f"t{n}", "parameters": {
        "type": "object", "properties": {"x": {"type": "string", "description": "é" * 300}}}}}
        for n in range(8)]  # fmt: skip
    players = []
    for name in ("a", "b"):
        record(tmp_path / f"{name}.json", chat(name, tools=tools, temperature=0.5))
        player = TrafficPlayer(tmp_path / f"{name}.json", META, "none", keep_texts=True)
        assert isinstance(player.lookup(chat(name, tools=tools, temperature=0.5)), Replayed)
        players.append(player)
    first, second = (player.recorded[0].request.body for player in players)
    assert first["tools"] is second["tools"] and first["tools"] == tools
    for player in players:
        body = player.recorded[0].request.body
        conversation = Conversation(run_id="r", target="pytest/t", case_id="c")
        exchanges = model_exchanges(player.timeline, player.body_texts)
        (made,) = exchange_records(conversation, exchanges, findings={}, expectations={})
        assert made.request_sha256 == hashlib.sha256(sorted_json(body).encode()).hexdigest()


def test_a_miss_names_the_nearest_request_and_each_difference(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, chat("where is my order", temperature=0))
    player = TrafficPlayer(path, META, "none")
    found = player.lookup(chat("where is my parcel", temperature=1))
    assert isinstance(found, Miss) and found.nearest == 0
    assert found.differences == (
        '/messages/0/content: recorded "where is my order", now "where is my parcel"',
        "/temperature: recorded 0, now 1",
    )
    assert "the nearest recording, interaction 0, differs at:" in found.message


def test_none_mode_without_cassette_misses_and_writes_nothing(tmp_path: Path) -> None:
    player = TrafficPlayer(tmp_path / "absent.json", META, "none")
    found = player.lookup(chat("x"))
    assert isinstance(found, Miss) and "holds no interactions" in found.message
    assert not player.save() and not (tmp_path / "absent.json").exists()


def test_new_episodes_appends_and_all_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, chat("a"))
    player = TrafficPlayer(path, META, "new_episodes")
    assert isinstance(player.lookup(chat("a")), Replayed)
    assert isinstance(player.lookup(chat("b")), Live)
    player.keep(chat("b"), answer("b"))
    assert player.save()
    assert len(load_cassette(path).interactions) == 2
    player = TrafficPlayer(path, META, "all")
    assert isinstance(player.lookup(chat("a")), Live)
    player.keep(chat("c"), answer("c"))
    player.save()
    (only,) = load_cassette(path).interactions
    assert only.request.body["messages"][0]["content"] == "c"


def test_a_cassette_that_would_hold_the_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    player = TrafficPlayer(path, META, "all")
    request = chat("x")
    player.lookup(request)
    player.keep(request, answer("your key is sk-test-0123456789abcdefXYZ"))
    with pytest.raises(SecretLeakError):
        player.save()
    assert not path.exists()


def test_url_user_info_and_query_keys_are_scrubbed() -> None:
    request = ClientRequest("POST", "http://u:pw123456789@h/v1beta/x?key=AIzaK&alt=sse", {}, b"")
    assert request.recorded().uri == "http://h/v1beta/x?alt=sse"
    assert set(request.credentials()) == {"AIzaK", "pw123456789"}


def test_record_mode_names_are_checked() -> None:
    assert parse_record_mode("new_episodes") == "new_episodes"
    with pytest.raises(ValueError, match="none, once, new_episodes, all"):
        parse_record_mode("any")


def test_only_json_cassettes_are_written(tmp_path: Path) -> None:
    player = TrafficPlayer(tmp_path / "c.yaml", META, "all")
    player.keep(chat("x"), answer("x"))
    with pytest.raises(InputError, match="JSON cassettes"):
        player.save()


def test_streams_keep_their_events_and_framing() -> None:
    sse = b'event: message_start\ndata: {"a":1}\n\ndata: [DONE]\n\n'
    response = read_response(200, {"content-type": "text/event-stream"}, sse, URL)
    assert response.events == (StreamEvent("message_start", {"a": 1}), StreamEvent(None, "[DONE]"))
    assert (
        reply_of(response, URL).content
        == b'event: message_start\ndata: {"a":1}\n\ndata: [DONE]\n\n'
    )
    gemini = "http://h/v1beta/models/g:streamGenerateContent"
    array = read_response(200, {"content-type": "application/json"}, b'[{"x":1},{"y":2}]', gemini)
    assert array.events is not None and len(array.events) == 2
    assert json.loads(reply_of(array, gemini).content) == [{"x": 1}, {"y": 2}]


ANTHROPIC = "http://h/v1/messages"


def anthropic_exchange(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    from fcreplay.cassettes.interactions import Interaction, RecordedRequest

    body = {"model": "m", "max_tokens": 10, "messages": messages, "tools": tools}
    response = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
    }
    return Interaction(
        RecordedRequest("POST", ANTHROPIC, {}, body), WireResponse(200, {}, response)
    )


def test_split_parallel_results_are_a_history_problem_naming_the_ids() -> None:
    calls = [
        {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_order", "input": {}},
    ]
    results = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "b"},
    ]
    start = [{"role": "user", "content": "two orders"}, {"role": "assistant", "content": calls}]
    good = anthropic_exchange([*start, {"role": "user", "content": results}], [])
    split = anthropic_exchange(
        [
            *start,
            {"role": "user", "content": results[:1]},
            {"role": "user", "content": results[1:]},
        ],
        [],
    )
    exchanges = model_exchanges([good, split])
    assert exchanges[0].decision is not None and exchanges[0].decision.text == "ok"
    problems = history_problems(exchanges)
    assert [(p.exchange.index, p.problem.rule, p.problem.call_ids) for p in problems] == [
        (1, "split_results", ("toolu_1", "toolu_2"))
    ]
    assert history_problems(exchanges[:1], max_steps=1)[0].problem.rule == "too_many_steps"


def test_a_dropped_required_is_a_blocking_semantic_change(contract: Contract) -> None:
    tool = contract.tools[0]
    schema = {k: v for k, v in tool.parameters.items() if k != "required"}
    declared = [{"name": tool.name, "description": tool.description, "input_schema": schema}]
    (exchange,) = model_exchanges(
        [anthropic_exchange([{"role": "user", "content": "x"}], declared)]
    )
    drifts = tool_drifts([exchange], contract, tools=[tool.name])
    assert [(d.tool, d.pointer, d.kind, d.blocking) for d in drifts] == [
        (tool.name, f"/{tool.name}/parameters/required", "semantic_change", True)
    ]
    assert "semantic_change" in drifts[0].line and "exchange 0" in drifts[0].line
    allowed = tool_drifts([exchange], contract, tools=[tool.name], allow=["semantic_change"])
    assert not any(d.blocking for d in allowed)
