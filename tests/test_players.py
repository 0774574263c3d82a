"""Replay matching: a rebuilt request equals the recorded one, or it is drift (a value)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fcreplay.cassettes.store import Interaction, RecordedRequest
from fcreplay.cassettes.unit import PlacedInteraction
from fcreplay.engine.players import Mismatch, ReplayPlayer
from fcreplay.neutral import WireRequest, WireResponse
from fcreplay.record import Aborted

BODY = {"model": "m", "stream": False, "temperature": 0.0, "tools": [{"name": "a"}]}


def placed(body: dict[str, Any], *, hashed: bool) -> PlacedInteraction:
    request = RecordedRequest("POST", "http://h/v1/chat/completions", {}, body)
    digest = WireRequest("POST", "/chat/completions", {}, body).body_sha256
    response = WireResponse(200, {}, {"ok": True})
    return PlacedInteraction(1, 0, Interaction(request, response), digest if hashed else None)


def replay(recorded: dict[str, Any], now: dict[str, Any], *, hashed: bool) -> Any:
    player = ReplayPlayer(
        [placed(recorded, hashed=hashed)], cassette=Path("c.json"), record_hint="x"
    )
    return player.answer(WireRequest("POST", "/chat/completions", {}, now), step=0)


@pytest.mark.parametrize("hashed", [True, False])
def test_the_same_body_in_another_key_order_matches(hashed: bool) -> None:
    now = dict(reversed(list(BODY.items())))
    answer = replay(BODY, now, hashed=hashed)
    assert isinstance(answer, WireResponse) and answer.body == {"ok": True}


@pytest.mark.parametrize("hashed", [True, False])
def test_an_integral_float_matches_its_integer(hashed: bool) -> None:
    answer = replay(BODY, {**BODY, "temperature": 0}, hashed=hashed)
    assert isinstance(answer, WireResponse) and answer.status == 200


@pytest.mark.parametrize("hashed", [True, False])
def test_true_where_1_was_recorded_is_drift_though_python_calls_them_equal(hashed: bool) -> None:
    recorded = {**BODY, "stream": 1}
    assert recorded == {**BODY, "stream": True}  # the trap this guards against
    drift = replay(recorded, {**BODY, "stream": True}, hashed=hashed)
    assert isinstance(drift, Mismatch)
    assert [c.path for c in drift.changes] == ["/stream"]


def test_a_changed_body_names_every_changed_path() -> None:
    now = {**BODY, "tools": [{"name": "b"}], "max_tokens": 5}
    drift = replay(BODY, now, hashed=True)
    assert isinstance(drift, Mismatch)
    assert [c.path for c in drift.changes] == ["/max_tokens", "/tools/0/name"]
    assert "c.json interaction 0 (step 0)" in drift.message


def test_a_request_past_the_recording_is_a_missing_interaction() -> None:
    player = ReplayPlayer([], cassette=Path("c.json"), record_hint="fcreplay record --case x")
    answer = player.answer(WireRequest("POST", "/chat/completions", {}, BODY), step=1)
    assert isinstance(answer, Aborted) and answer.type == "missing_interaction"
    assert "fcreplay record --case x" in answer.message


def test_a_rebuilt_body_matches_though_its_strings_are_other_objects() -> None:
    # A body read from JSON has its own string objects; one built in memory shares and
    # interns them. The fast comparison must see values only.
    import json
    import sys

    shared = "a long system prompt " * 5
    built = {"messages": [{"role": sys.intern("system"), "content": shared}, {"c": shared}]}
    loaded = json.loads(json.dumps(built))
    request = WireRequest("POST", "/chat/completions", {}, built)
    player = ReplayPlayer([placed(loaded, hashed=True)], cassette=Path("c.json"), record_hint="x")
    player.answer(request, step=0)
    assert "body_json" not in request.__dict__  # settled without serializing the body


@pytest.mark.parametrize("now_value", [True, 1.0, 2])
def test_a_nested_value_of_another_type_is_drift_beside_a_shared_tool_list(
    now_value: object,
) -> None:
    # The tool list is one object on both sides, as interned lists are: equality passes
    # over it, and must not let `1` pass for `true` or `1.0` deeper in the body.
    tools = [{"name": "a"}]
    recorded = {"model": "m", "messages": [{"role": "user", "n": 1}], "tools": tools}
    now = {"model": "m", "messages": [{"role": "user", "n": now_value}], "tools": tools}
    answer = replay(recorded, now, hashed=True)
    if now_value == 2 or now_value is True:
        assert isinstance(answer, Mismatch)
        assert [c.path for c in answer.changes] == ["/messages/0/n"]
    else:  # 1.0 is 1 canonically: a match, but not an exact one (its own hash)
        assert isinstance(answer, WireResponse)
