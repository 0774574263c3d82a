"""Cassette format 2: each distinct tool list stored once and referred to, short leaf values on
one line; read back exactly as recorded, format 1 still read."""

from __future__ import annotations

import difflib
import json
import marshal
import re
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cassettes.layout import WIDTH, layout
from fcreplay.cassettes.redaction import SecretGuard
from fcreplay.cassettes.store import (
    SERIALIZER,
    CassetteMeta,
    Interaction,
    RecordedRequest,
    cassette_text,
    load_cassette,
    read_interactions,
    write_cassette,
)
from fcreplay.cassettes.unit import PlacedInteraction, UnitCassette
from fcreplay.errors import InputError
from fcreplay.limits import Limits
from fcreplay.neutral import StreamEvent, WireRequest, WireResponse
from fcreplay.traffic.cassette import load_traffic, save_traffic, traffic_meta

from .conftest import ROOT

URL = "https://api.openai.com/v1/chat/completions"
META = CassetteMeta(target="t", adapter="a", variant="auto", case_id="c")
SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["id"]}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_order", "parameters": SCHEMA}}
]
OTHER_TOOLS = [
    {"type": "function", "function": {"name": "quote", "parameters": {"type": "object"}}}
]
REPLY = {"id": "r", "choices": [{"message": {"role": "assistant", "content": "Ici"}}]}


def exchange(body: Any, reply: Any = REPLY, events: Any = None) -> Interaction:
    request = RecordedRequest("POST", URL, {"content-type": "application/json"}, body)
    response = WireResponse(200, {"content-type": "application/json"}, reply, events)
    return Interaction(request, response)


def turn(content: str, tools: Any = TOOLS) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": content}], "tools": tools}


def readable(path: Path) -> list[Interaction]:
    interactions = read_interactions(path)
    assert all(isinstance(i, Interaction) for i in interactions), interactions
    return [i for i in interactions if isinstance(i, Interaction)]


def same(first: Any, second: Any) -> bool:
    """Equal as JSON values: `true` is not `1`, `1.0` is not `1`, key order counts."""
    return marshal.dumps(first, 0) == marshal.dumps(second, 0)


def written(tmp_path: Path, interactions: list[Interaction]) -> tuple[Path, dict[str, Any]]:
    path = write_cassette(tmp_path / "c.json", interactions, META)
    return path, json.loads(path.read_text(encoding="utf-8"))


# --- one tool list, stored once ------------------------------------------------------------


def test_a_tool_list_every_request_sends_is_stored_once_and_read_back_in_each(
    tmp_path: Path,
) -> None:
    interactions = [exchange(turn("one")), exchange(turn("two")), exchange(turn("three"))]
    path, document = written(tmp_path, interactions)
    ((name, value),) = document["shared"].items()
    assert re.fullmatch(r"tools-[0-9a-f]{12}", name)
    assert value == TOOLS
    bodies = [item["request"]["parsed_body"] for item in document["interactions"]]
    assert [body["tools"] for body in bodies] == [{"$fcreplay_shared": name}] * 3
    assert list(document) == ["version", "fcreplay", "shared", "interactions"]
    back = readable(path)
    assert back == interactions
    assert all(
        same(b.request.body, i.request.body) for b, i in zip(back, interactions, strict=True)
    )
    assert turn("one")["tools"] is TOOLS  # the writer copies; the bodies it was given stay


def test_the_request_hash_is_the_hash_of_the_body_as_sent() -> None:
    # Every example interaction is labelled with the hash of the body recorded; the body
    # read back from the shared layout hashes to it.
    checked = 0
    for path in sorted((ROOT / "cassettes").rglob("*.json"))[:40]:
        for interaction in load_cassette(path).interactions:
            assert isinstance(interaction, Interaction)
            assert interaction.label is not None
            body = interaction.request.body
            assert (
                WireRequest("POST", "", {}, body).body_sha256 == interaction.label["request_sha256"]
            )
            checked += 1
    assert checked > 100


def test_distinct_tool_lists_each_get_a_name_in_order_of_first_use(tmp_path: Path) -> None:
    reordered = [{"function": TOOLS[0]["function"], "type": "function"}]  # key order counts
    with_true = [{**TOOLS[0], "strict": True}]
    with_one = [{**TOOLS[0], "strict": 1}]  # not the same value as `true`
    lists = [OTHER_TOOLS, TOOLS, reordered, with_true, with_one, TOOLS, OTHER_TOOLS]
    interactions = [exchange(turn(str(n), tools)) for n, tools in enumerate(lists)]
    path, document = written(tmp_path, interactions)
    assert list(document["shared"].values()) == [OTHER_TOOLS, TOOLS, reordered, with_true, with_one]
    back = readable(path)
    assert all(
        same(b.request.body, i.request.body) for b, i in zip(back, interactions, strict=True)
    )


def test_a_tool_list_one_object_down_is_shared_too(tmp_path: Path) -> None:
    body = {"messages": [], "toolConfig": {"tools": TOOLS, "toolChoice": {"auto": {}}}}
    path, document = written(tmp_path, [exchange(body), exchange(body)])
    assert document["shared"] == {next(iter(document["shared"])): TOOLS}
    stored = document["interactions"][0]["request"]["parsed_body"]["toolConfig"]
    assert list(stored) == ["tools", "toolChoice"] and "$fcreplay_shared" in stored["tools"]
    assert [i.request.body for i in readable(path)] == [body, body]


@pytest.mark.parametrize(
    "tools",
    [[], None, "all", 3],
    ids=["empty", "null", "text", "number"],
)
def test_empty_and_scalar_tool_values_stay_in_place(tmp_path: Path, tools: Any) -> None:
    path, document = written(tmp_path, [exchange(turn("x", tools))])
    assert "shared" not in document
    assert document["interactions"][0]["request"]["parsed_body"]["tools"] == tools
    assert same(readable(path)[0].request.body, turn("x", tools))


def test_a_recorded_object_that_looks_like_a_reference_reads_back_as_recorded(
    tmp_path: Path,
) -> None:
    # At a shared place the writer replaces every object, so a body can never be taken
    # for a reference; an object nested deeper is never looked at.
    lookalike = {"$fcreplay_shared": "tools-000000000000"}
    body = {
        "tools": lookalike,
        "metadata": {"note": lookalike},
        "deep": {"a": {"tools": lookalike}},
    }
    path, document = written(tmp_path, [exchange(body)])
    assert list(document["shared"].values()) == [lookalike]
    assert same(readable(path)[0].request.body, body)


def test_bodies_that_are_not_json_are_kept_as_recorded(tmp_path: Path) -> None:
    text = '{"tools": [1, 2], truncated'
    path, document = written(tmp_path, [exchange(text, reply='{"tools": [3]')])
    assert "shared" not in document
    assert document["interactions"][0]["request"]["body"] == {"string": text}
    (back,) = readable(path)
    assert (back.request.body, back.response.body) == (text, '{"tools": [3]')


def test_response_bodies_and_stream_events_share_their_tool_lists(tmp_path: Path) -> None:
    # Some APIs echo the request's tools in the response, and in more than one event.
    echoed = {"id": "r", "tools": TOOLS}
    events = (
        StreamEvent("response.created", {"type": "created", "response": echoed}),
        StreamEvent("response.completed", {"type": "completed", "response": echoed}),
        StreamEvent(None, "[DONE]"),
    )
    interactions = [exchange(turn("a"), reply=echoed), exchange(turn("b"), None, events)]
    path, document = written(tmp_path, interactions)
    assert len(document["shared"]) == 1
    assert document["shared"][next(iter(document["shared"]))] == TOOLS
    assert read_interactions(path) == interactions


# --- reading -------------------------------------------------------------------------------


def format_one(tmp_path: Path, body: dict[str, Any], name: str = "old.json") -> Path:
    """A cassette as fcreplay wrote it before format 2: tools in full in every body."""
    document = {
        "version": 1,
        "fcreplay": {**META.to_json(), "format": 1},
        "interactions": [
            {
                "request": {"method": "POST", "uri": URL, "headers": {}, "parsed_body": body},
                "response": {"status": {"code": 200, "message": "OK"}, "parsed_body": REPLY},
            }
        ],
    }
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def test_format_1_is_read_as_it_stands_and_resaved_in_format_2(tmp_path: Path) -> None:
    lookalike = {"$fcreplay_shared": "tools-0"}  # in format 1 no object is a reference
    old = format_one(tmp_path, turn("x"))
    odd = format_one(tmp_path, {**turn("y"), "tools": lookalike}, "odd.json")
    assert [i.request.body for i in readable(old)] == [turn("x")]
    assert [i.request.body for i in readable(odd)] == [{**turn("y"), "tools": lookalike}]
    cassette = load_cassette(old)
    assert cassette.meta == META
    kept = [i for i in cassette.interactions if isinstance(i, Interaction)]
    again = write_cassette(tmp_path / "again.json", kept, META)
    assert json.loads(again.read_text(encoding="utf-8"))["fcreplay"]["format"] == 2
    assert read_interactions(again) == kept


def test_a_unit_cassette_staged_and_committed_writes_format_2(tmp_path: Path) -> None:
    path = tmp_path / "unit.json"
    unit = UnitCassette(path, META)
    for attempt in (1, 2):
        unit.put(attempt, [PlacedInteraction(attempt, 0, exchange(turn(str(attempt))))])
        unit.save(SecretGuard(()))
    assert not path.exists() and unit.staging.exists()
    unit.commit()
    document = json.loads(path.read_text(encoding="utf-8"))
    assert len(document["shared"]) == 1 and len(document["interactions"]) == 2
    again = UnitCassette.load(path, META)
    assert [p.interaction.request.body for p in again.of_attempt(2)] == [turn("2")]


def shared_cassette(tmp_path: Path) -> tuple[Path, str, str]:
    path, document = written(tmp_path, [exchange(turn("a")), exchange(turn("b"))])
    return path, path.read_text(encoding="utf-8"), next(iter(document["shared"]))


def line_of(text: str, fragment: str, occurrence: int = 0) -> int:
    lines = [n for n, line in enumerate(text.splitlines(), 1) if fragment in line]
    return lines[occurrence]


def test_a_reference_to_a_missing_value_names_the_file_and_line(tmp_path: Path) -> None:
    path, text, name = shared_cassette(tmp_path)
    second = line_of(text, '"$fcreplay_shared"', 1)
    lines = text.splitlines()
    lines[second - 1] = lines[second - 1].replace(name, "tools-ffffffffffff")
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_interactions(path)
    (problem,) = raised.value.problems
    assert (problem.file, problem.line) == (path, second)
    assert "interaction 1" in problem.message and "'tools-ffffffffffff'" in problem.message
    assert "re-record" in problem.message


def test_a_malformed_reference_names_the_file_and_line(tmp_path: Path) -> None:
    path, text, name = shared_cassette(tmp_path)
    second = line_of(text, '"$fcreplay_shared"', 1)
    path.write_text(text.replace(f'"{name}"}}', f'"{name}", "x": 1}}'), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_interactions(path)
    (problem,) = raised.value.problems
    assert (problem.file, problem.line) == (path, line_of(text, '"$fcreplay_shared"', 0))
    assert "interaction 0" in problem.message and "must be an array" in problem.message
    assert problem.line is not None and second > problem.line  # the first bad one is named


def test_a_shared_block_that_is_not_an_object_names_its_line(tmp_path: Path) -> None:
    path, text, _ = shared_cassette(tmp_path)
    document = json.loads(text)
    document["shared"] = [TOOLS]
    path.write_text(layout(document) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_interactions(path)
    (problem,) = raised.value.problems
    assert problem.line == line_of(path.read_text(encoding="utf-8"), '"shared"')
    assert "must be an object" in problem.message


def test_references_that_would_read_past_the_size_limit_are_refused(tmp_path: Path) -> None:
    # A reference bomb: a small file naming one large value many times.
    big = [{"name": "t", "description": "x" * 5000}]
    path, _ = written(tmp_path, [exchange(turn(str(n), big)) for n in range(40)])
    size = path.stat().st_size
    assert len(read_interactions(path, Limits(max_cassette_bytes=size * 40))) == 40
    with pytest.raises(InputError, match="max_cassette_bytes"):
        read_interactions(path, Limits(max_cassette_bytes=size * 2))


def test_the_vcrpy_serializer_reads_format_2_with_the_tools_put_back(tmp_path: Path) -> None:
    text = cassette_text([exchange(turn("a")), exchange(turn("b"))], META)
    interactions = SERIALIZER.deserialize(text)["interactions"]
    assert [json.loads(i["request"]["body"])["tools"] for i in interactions] == [TOOLS, TOOLS]
    broken = text.replace('"$fcreplay_shared": "tools-', '"$fcreplay_shared": "nope-', 1)
    with pytest.raises(ValueError, match="does not hold"):
        SERIALIZER.deserialize(broken)


# --- the layout a reviewer reads -----------------------------------------------------------


def test_short_leaf_values_fold_onto_their_line_and_long_ones_do_not() -> None:
    value = {
        "required": ["origin", "destination"],
        "long": ["word " * 10, "word " * 10],
        "nested": {"a": {"b": 1}},
        "empty": [],
    }
    assert layout(value) == (
        "{\n"
        ' "required": ["origin", "destination"],\n'
        ' "long": [\n'
        f'  "{"word " * 10}",\n'
        f'  "{"word " * 10}"\n'
        " ],\n"
        ' "nested": {\n'
        '  "a": {"b": 1}\n'
        " },\n"
        ' "empty": []\n'
        "}"
    )
    assert json.loads(layout(value)) == value


def test_the_example_cassettes_keep_folded_lines_within_the_width() -> None:
    for path in sorted((ROOT / "cassettes").rglob("*.json"))[:20]:
        for line in path.read_text(encoding="utf-8").splitlines():
            stripped = line.strip().rstrip(",")
            folded = stripped.endswith(("]", "}")) and ("[" in stripped or "{" in stripped)
            assert not folded or len(line) <= WIDTH, (path, line)


def test_a_changed_tool_description_shows_once_in_the_diff_of_a_re_recording() -> None:
    tools = [{"type": "function", "function": {**TOOLS[0]["function"], "description": "Read."}}]
    changed = json.loads(json.dumps(tools))
    changed[0]["function"]["description"] = "Read one order."
    before = cassette_text(
        [exchange(turn("a", tools)), exchange(turn("b", tools))], META
    ).splitlines()
    after = cassette_text(
        [exchange(turn("a", changed)), exchange(turn("b", changed))], META
    ).splitlines()
    diff = [
        line
        for line in difflib.unified_diff(before, after, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    added = [line for line in diff if line.startswith("+")]
    # The shared value's name (its content changed), the new field once, and the
    # reference in each request; nothing else of either request moves.
    assert sum('"description": "Read one order."' in line for line in added) == 1
    assert sum('"$fcreplay_shared"' in line for line in added) == 2
    assert len(added) == 4, diff


def test_proxy_and_plugin_cassettes_share_their_tool_lists_too(tmp_path: Path) -> None:
    interactions = [exchange(turn("a")), exchange(turn("b"))]
    path = tmp_path / "traffic.json"
    save_traffic(path, traffic_meta("pytest/test_x", "test_y"), interactions, secrets=())
    document = json.loads(path.read_text(encoding="utf-8"))
    assert (document["fcreplay"]["format"], list(document["shared"].values())) == (2, [TOOLS])
    back = load_traffic(path)
    assert back is not None and [i.request.body for i in back] == [turn("a"), turn("b")]


def test_a_shared_block_edited_past_its_opening_is_read_as_it_now_stands(tmp_path: Path) -> None:
    # The parsed blocks are kept by their text: one that begins alike, or that a known text
    # begins, is another block and is read as such.
    path, _ = written(tmp_path, [exchange(turn("a")), exchange(turn("b"))])
    text = path.read_text(encoding="utf-8")
    assert readable(path)[0].request.body["tools"] == TOOLS
    edited = tmp_path / "edited.json"
    edited.write_text(text.replace('"get_order"', '"get_parcel"'), encoding="utf-8")
    renamed = [{"type": "function", "function": {**TOOLS[0]["function"], "name": "get_parcel"}}]
    assert [i.request.body["tools"] for i in readable(edited)] == [renamed, renamed]
    longer = tmp_path / "longer.json"
    extra = ',\n  "tools-000000000000": []\n }'
    block_end = text.index('\n },\n "interactions": ')
    longer.write_text(text[:block_end] + extra + text[block_end + 3 :], encoding="utf-8")
    assert [i.request.body["tools"] for i in readable(longer)] == [TOOLS, TOOLS]
    assert readable(path)[1].request.body["tools"] == TOOLS
