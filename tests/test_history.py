"""Tool-loop history: what each adapter builds is well formed; each broken rule is named."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fcreplay.adapters.registry import get_adapter
from fcreplay.decision import Decision, ToolCall
from fcreplay.inputs.contract import Contract
from fcreplay.judge.history import check_history, history_of
from fcreplay.neutral import Message, RequestSettings, ToolResult

APIS = ("openai_chat", "openai_responses", "anthropic", "gemini")


def parallel_history(api: str, contract: Contract) -> dict[str, Any]:
    """A second-turn request after two parallel calls, built by the adapter itself."""
    adapter = get_adapter(api)
    calls = (
        ToolCall("call_a", "get_order", {"order_id": "ORD-1"}, {"order_id": "ORD-1"}),
        ToolCall("call_b", "get_order", {"order_id": "ORD-2"}, {"order_id": "ORD-2"}),
    )
    decision = Decision("tool_call", calls=calls, stop="tool_call")
    results = [ToolResult(call.call_id, call.name, {"ok": True}) for call in calls]
    history = adapter.append_tool_result([Message("user", "two orders")], decision, results)
    return adapter.build_request("m", history, contract.tools, RequestSettings()).body


@pytest.mark.parametrize("api", APIS)
def test_what_the_adapters_build_breaks_no_rule(api: str, contract: Contract) -> None:
    history = history_of(get_adapter(api), parallel_history(api, contract))
    assert history is not None and len(history.turns) == 1
    assert check_history(history) == []
    assert [p.rule for p in check_history(history, max_steps=1)] == ["too_many_steps"]


def split(api: str, body: dict[str, Any]) -> dict[str, Any]:
    """The same request with the second result moved into a message of its own."""
    body = copy.deepcopy(body)
    key = {"anthropic": "messages", "gemini": "contents"}[api]
    last = body[key][-1]
    parts = "content" if api == "anthropic" else "parts"
    second = {**last, parts: last[parts][1:]}
    last[parts] = last[parts][:1]
    body[key].append(second)
    return body


@pytest.mark.parametrize("api", ["anthropic", "gemini"])
def test_results_split_over_two_messages(api: str, contract: Contract) -> None:
    body = split(api, parallel_history(api, contract))
    problems = check_history(history_of(get_adapter(api), body))  # type: ignore[arg-type]
    assert [p.rule for p in problems] == ["split_results"]
    if api == "anthropic":
        assert problems[0].call_ids == ("call_a", "call_b")


def test_openai_tool_messages_must_follow_the_turn(contract: Contract) -> None:
    body = parallel_history("openai_chat", contract)
    body["messages"].insert(-1, {"role": "user", "content": "and?"})
    problems = check_history(history_of(get_adapter("openai_chat"), body))  # type: ignore[arg-type]
    assert [(p.rule, p.call_ids) for p in problems] == [("misplaced_results", ("call_a", "call_b"))]
    assert "/messages/" in problems[0].message and "stands between" in problems[0].message


def test_responses_outputs_pair_by_call_id(contract: Contract) -> None:
    body = parallel_history("openai_responses", contract)
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    outputs[1]["call_id"] = "call_a"
    problems = check_history(history_of(get_adapter("openai_responses"), body))  # type: ignore[arg-type]
    assert {(p.rule, p.call_ids) for p in problems} == {
        ("unanswered", ("call_b",)),
        ("answered_twice", ("call_a",)),
    }


def test_gemini_counts_and_names(contract: Contract) -> None:
    body = parallel_history("gemini", contract)
    body["contents"][-1]["parts"].pop()
    problems = check_history(history_of(get_adapter("gemini"), body))  # type: ignore[arg-type]
    assert [p.rule for p in problems] == ["count_mismatch"]
    body = parallel_history("gemini", contract)
    body["contents"][-1]["parts"][1]["functionResponse"]["name"] = "cancel_order"
    problems = check_history(history_of(get_adapter("gemini"), body))  # type: ignore[arg-type]
    assert [p.rule for p in problems] == ["name_mismatch"]


def test_a_history_without_calls_is_checked_like_any_other() -> None:
    # No call and no result takes a short way; a result without a call does not.
    from fcreplay.history import History, HistoryMessage, HistoryResult

    plain = (HistoryMessage(0, "/messages/0"), HistoryMessage(1, "/messages/1"))
    for pairing in ("id", "name"):
        history = History(plain, placement="next_message", pairing=pairing)  # type: ignore[arg-type]
        assert check_history(history) == []
        assert [p.rule for p in check_history(history, max_steps=0)] == ["too_many_steps"]
    orphan = (*plain, HistoryMessage(2, "/messages/2", results=(HistoryResult("x", None),)))
    by_id = check_history(History(orphan, placement="right_after"))
    assert [(p.rule, p.call_ids) for p in by_id] == [("unknown_call", ("x",))]
    assert check_history(History(orphan, placement="next_message", pairing="name")) == []
