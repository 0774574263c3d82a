"""Reading a format-2 cassette: the quick paths (tool lists put back only at the tops of request
bodies when nothing else can hold one, own-layout interactions read in one call) give what
the full walk and the general reader give, and the same errors at the same lines."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import fcreplay.cassettes.shared as shared
import fcreplay.strictjson as strictjson
from fcreplay.cassettes.formats import interaction_items
from fcreplay.cassettes.interactions import read_interaction, read_own
from fcreplay.cassettes.store import (
    CassetteMeta,
    Interaction,
    RecordedRequest,
    read_interactions,
    write_cassette,
)
from fcreplay.errors import InputError
from fcreplay.neutral import StreamEvent, WireResponse

URL = "https://api.openai.com/v1/chat/completions"
META = CassetteMeta(target="t", adapter="a", variant="auto", case_id="c")
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}}
]
REPLY = {"id": "r", "choices": [{"message": {"role": "assistant", "content": "Ici"}}]}
SIZES = ["small", "large"]
"""A cassette whose text is below `strictjson._LARGE` (its value walked, nothing counted)
and one above it (its members named `tools` counted as its nesting is bounded)."""


def exchange(body: Any, reply: Any = REPLY, events: Any = None) -> Interaction:
    request = RecordedRequest("POST", URL, {"content-type": "application/json"}, body)
    response = WireResponse(200, {"content-type": "application/json"}, reply, events)
    return Interaction(request, response)


def turn(content: str, size: str, **more: Any) -> dict[str, Any]:
    content = content if size == "small" else content + " " + "x" * 6000
    return {"model": "m", "messages": [{"role": "user", "content": content}], **more}


def written(tmp_path: Path, interactions: list[Interaction]) -> tuple[Path, str]:
    path = write_cassette(tmp_path / "c.json", interactions, META)
    return path, path.read_text(encoding="utf-8")


def fully_walked(text: str) -> Any:
    """The document as the full walk puts its shared values back (no count given)."""
    document = json.loads(text)
    shared.expand(document, document["interactions"])
    return document


def counted(text: str) -> int | None:
    return strictjson.loads_keyed(text.encode(), shared.MEMBER)[1]


@pytest.mark.parametrize("size", SIZES)
def test_tool_lists_at_the_top_of_request_bodies_are_put_back(tmp_path: Path, size: str) -> None:
    interactions = [exchange(turn(str(n), size, tools=TOOLS)) for n in range(3)]
    path, text = written(tmp_path, interactions)
    assert counted(text) == (None if size == "small" else 3)
    assert read_interactions(path) == interactions


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    "place",
    ["response body", "stream event", "one object down", "a list elsewhere", "nested deeper"],
)
def test_a_member_named_tools_elsewhere_is_read_as_the_full_walk_reads_it(
    tmp_path: Path, size: str, place: str
) -> None:
    echoed = {"id": "r", "tools": TOOLS}
    first = exchange(turn("a", size, tools=TOOLS))
    if place == "response body":
        other = exchange(turn("b", size, tools=TOOLS), reply=echoed)
    elif place == "stream event":
        events = (StreamEvent("created", {"response": echoed}), StreamEvent(None, "[DONE]"))
        other = exchange(turn("b", size, tools=TOOLS), None, events)
    elif place == "one object down":
        other = exchange(turn("b", size, toolConfig={"tools": TOOLS}))
    elif place == "a list elsewhere":
        other = exchange(turn("b", size, tools=TOOLS), reply={"tools": [], "id": "r"})
    else:
        other = exchange(turn("b", size, tools=TOOLS, meta={"a": {"tools": {"x": 1}}}))
    path, text = written(tmp_path, [first, other])
    named = counted(text)
    # More than the tops of request bodies hold (two, or one with `toolConfig.tools`).
    assert named == (None if size == "small" else 2 if place == "one object down" else 3)
    assert read_interactions(path) == [first, other]
    quick, full = json.loads(text), json.loads(text)
    counts = shared.expand(quick, quick["interactions"], named)
    assert (counts, quick) == (shared.expand(full, full["interactions"]), full)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("where", ["request", "response"])
def test_a_missing_reference_names_the_same_line_on_either_path(
    tmp_path: Path, size: str, where: str
) -> None:
    reply = {"id": "r", "tools": TOOLS} if where == "response" else REPLY
    path, text = written(
        tmp_path, [exchange(turn("a", size, tools=TOOLS), reply) for _ in range(2)]
    )
    name = next(iter(json.loads(text)["shared"]))
    lines = text.splitlines()
    marks = [n for n, line in enumerate(lines) if '"$fcreplay_shared"' in line]
    lines[marks[-1]] = lines[marks[-1]].replace(name, "tools-ffffffffffff")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_interactions(path)
    (problem,) = raised.value.problems
    assert problem.line == marks[-1] + 1 and "interaction 1" in problem.message
    assert ("response body" in problem.message) == (where == "response")


@pytest.mark.parametrize("size", SIZES)
def test_a_malformed_reference_at_the_top_is_named_as_before(tmp_path: Path, size: str) -> None:
    path, text = written(tmp_path, [exchange(turn("a", size, tools=TOOLS)) for _ in range(2)])
    document = json.loads(text)
    document["interactions"][1]["request"]["parsed_body"]["tools"]["x"] = 1
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    with pytest.raises(InputError, match="interaction 1: request body: 'tools' must be an array"):
        read_interactions(path)


def test_the_count_is_never_below_the_members_so_named() -> None:
    pad = "y" * 5000
    values: list[Any] = [
        {"tools": 1, "a": [{"tools": {"tools": None}}], "b": "tools", "c": '"tools":'},
        {"tools\\": 1, 'x"tools': 2, "pad": pad},  # a name ending in \"tools is counted too
        {"Tools": 1, "tool": 2, "tools ": 3, "pad": pad},
    ]
    for value, expected in zip(values, [3, 1, 0], strict=True):
        text = json.dumps({**value, "pad": pad}).encode()
        assert strictjson.loads_keyed(text, "tools") == (json.loads(text), expected)
    with pytest.raises(ValueError, match="escapes"):
        strictjson.loads_keyed(b"{}", 'a"b')


def own_items() -> list[Any]:
    """Interactions in fcreplay's layout, and shapes near it the quick read must pass on."""
    base = {
        "request": {
            "method": "post",
            "uri": URL,
            "headers": {"Content-Type": ["application/json"], "X-A": ["1", "2"]},
            "parsed_body": {"model": "m"},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "parsed_body": {"id": "r"},
        },
        "label": {"attempt": 1, "step": 0},
    }
    items: list[Any] = [base, {**base, "label": [1]}, {**base, "label": None}, [], None, {}]
    for part, key, value in [
        ("request", "method", 5),
        ("request", "uri", 7),
        ("request", "headers", {"a": "text"}),
        ("request", "headers", {"a": []}),
        ("request", "headers", {"a": [1]}),
        ("request", "headers", {1: ["x"]}),
        ("request", "headers", None),
        ("request", "headers", ["x"]),
        ("request", "parsed_body", None),
        ("request", "parsed_body", "text"),
        ("response", "status", 200),
        ("response", "status", {"code": "200"}),
        ("response", "status", {"code": True}),
        ("response", "status", {"code": 99}),
        ("response", "status", {"code": 600}),
        ("response", "headers", {}),
        ("response", "parsed_body", [1, 2]),
        ("response", "parsed_body", "text"),
        ("response", "sse", [{"event": "e", "data": {"a": 1}}, {"data": "[DONE]"}]),
        ("response", "sse", [{"event": "e"}, "not an event"]),
        ("response", "sse", {"event": "e"}),
        ("response", "body", {"string": "hi"}),
    ]:
        item = copy.deepcopy(base)
        item[part][key] = value
        items.append(item)
        dropped = copy.deepcopy(base)
        if dropped[part].pop(key, None) is not None:
            items.append(dropped)
    sse = copy.deepcopy(base)
    sse["response"]["sse"] = [{"event": None, "data": {"a": 1}}]
    items.append(sse)  # both `sse` and `parsed_body`: the events win, as in the general read
    return items


@pytest.mark.parametrize("item", own_items(), ids=repr)
def test_the_quick_read_of_own_interactions_gives_what_the_general_read_gives(item: Any) -> None:
    general = read_interaction(3, copy.deepcopy(item), own=True)
    assert read_own(3, copy.deepcopy(item)) == general
    assert type(read_own(3, copy.deepcopy(item))) is type(general)


def test_every_example_cassette_reads_alike_on_the_quick_and_the_general_path() -> None:
    root = Path(__file__).resolve().parent.parent / "examples"
    paths = sorted(root.rglob("cassettes/**/*.json"))
    assert paths
    for path in paths:
        document = fully_walked(path.read_text(encoding="utf-8"))
        items = interaction_items(document) or []
        general = [read_interaction(n, item, own=True) for n, item in enumerate(items)]
        assert read_interactions(path) == general, path


def test_headers_read_again_are_equal_values_in_dictionaries_of_their_own() -> None:
    (base, *_) = own_items()
    readings = []
    for attempt in ["1", "2", "1", "2", "1", 1]:
        item = copy.deepcopy(base)
        item["request"]["headers"]["x-fcreplay-attempt"] = [attempt]
        readings.append(read_own(0, item))
    heads = [r.request.headers for r in readings if isinstance(r, Interaction)]
    assert [h.get("x-fcreplay-attempt") for h in heads] == ["1", "2", "1", "2", "1", "1"]
    assert readings[-1] == read_interaction(0, item, own=True)  # 1 is no text: read in full
    heads[0]["x-fcreplay-attempt"] = "changed"
    assert heads[2]["x-fcreplay-attempt"] == "1" and heads[0] is not heads[2]
    assert len({id(r.response.headers) for r in readings if isinstance(r, Interaction)}) == 6
