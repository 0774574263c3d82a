"""Cassettes: reading every storage style other projects use, and fcreplay's own format."""

from __future__ import annotations

import base64
import gzip
import json
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import vcr
import yaml

from fcreplay.atomic import write_text_atomically
from fcreplay.cassettes.sse import format_sse
from fcreplay.cassettes.store import (
    SERIALIZER,
    SERIALIZER_NAME,
    CassetteMeta,
    Interaction,
    RecordedRequest,
    UnreadableInteraction,
    cassette_text,
    load_cassette,
    read_interactions,
    write_cassette,
)
from fcreplay.errors import InputError
from fcreplay.neutral import StreamEvent, WireResponse

CHAT_URL = "https://api.openai.com/v1/chat/completions"
GEMINI_STREAM_URL = (
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent"
)
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "Où est ma commande ?"}]}
REPLY = {"id": "r1", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Ici"}}]}
SSE_TEXT = 'event: message_start\ndata: {"type":"message_start"}\n\ndata: [DONE]\n\n'
SSE_EVENTS = (StreamEvent("message_start", {"type": "message_start"}), StreamEvent(None, "[DONE]"))
META = CassetteMeta(target="sim-openai", adapter="openai_chat", variant="auto", case_id="c-1")


def vcr_item(
    body: Any,
    *,
    uri: str = CHAT_URL,
    request_body: Any = None,
    status: Any = None,
    headers: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """An interaction as vcrpy writes it (request body a string, response body.string)."""
    return {
        "request": {
            "method": "POST",
            "uri": uri,
            "headers": {"Content-Type": ["application/json"], "Accept": ["*/*", "x"]},
            "body": json.dumps(REQUEST) if request_body is None else request_body,
        },
        "response": {
            "status": status or {"code": 200, "message": "OK"},
            "headers": headers or {"Content-Type": ["application/json"]},
            "body": {"string": body},
        },
    }


def write_yaml(path: Path, items: list[dict[str, Any]]) -> Path:
    # SafeDumper writes bytes as !!binary, as vcrpy does for gzip bodies.
    path.write_text(
        yaml.dump({"interactions": items, "version": 1}, Dumper=yaml.SafeDumper), encoding="utf-8"
    )
    return path


def only(interactions: list[Interaction | UnreadableInteraction]) -> Interaction:
    assert len(interactions) == 1
    interaction = interactions[0]
    assert isinstance(interaction, Interaction), interaction
    return interaction


# --- other projects' cassettes ----------------------------------------------------------


def test_plain_vcrpy_yaml_with_json_string_bodies(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "c.yaml", [vcr_item(json.dumps(REPLY))])
    interaction = only(read_interactions(path))
    assert interaction.request == RecordedRequest(
        "POST", CHAT_URL, {"content-type": "application/json", "accept": "*/*"}, REQUEST
    )
    assert interaction.response == WireResponse(
        200, {"content-type": "application/json"}, REPLY, None
    )


def test_parsed_body_style_of_pydantic_ai(tmp_path: Path) -> None:
    item = vcr_item(None)
    del item["request"]["body"], item["response"]["body"]
    item["request"]["parsed_body"] = REQUEST
    item["response"]["parsed_body"] = REPLY
    interaction = only(read_interactions(write_yaml(tmp_path / "c.yaml", [item])))
    assert interaction.request.body == REQUEST
    assert interaction.response.body == REPLY


def test_gzip_binary_bodies_are_decompressed(tmp_path: Path) -> None:
    headers = {"Content-Type": ["application/json"], "Content-Encoding": ["gzip"]}
    items = [
        vcr_item(gzip.compress(json.dumps(REPLY).encode()), headers=headers),
        vcr_item(
            gzip.compress(SSE_TEXT.encode()),
            headers={"content-type": ["text/event-stream"], "content-encoding": ["gzip"]},
        ),
    ]
    path = write_yaml(tmp_path / "c.yaml", items)
    assert "!!binary" in path.read_text(encoding="utf-8")
    json_reply, stream = read_interactions(path)
    assert isinstance(json_reply, Interaction) and isinstance(stream, Interaction)
    assert json_reply.response.body == REPLY
    assert stream.response.events == SSE_EVENTS
    assert stream.response.body is None


def test_base64_bodies_in_json_cassettes(tmp_path: Path) -> None:
    packed = base64.b64encode(gzip.compress(json.dumps(REPLY).encode())).decode()
    items = [
        vcr_item(None),
        vcr_item(packed, headers={"content-encoding": ["gzip"]}),
    ]
    items[0]["response"]["body"] = {"base64_string": base64.b64encode(b'{"a": 1}').decode()}
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"version": 1, "interactions": items}), encoding="utf-8")
    first, second = read_interactions(path)
    assert isinstance(first, Interaction) and isinstance(second, Interaction)
    assert first.response.body == {"a": 1}
    assert second.response.body == REPLY


def test_sse_bodies_become_events_even_without_a_content_type(tmp_path: Path) -> None:
    items = [
        vcr_item(SSE_TEXT, headers={"content-type": ["text/event-stream; charset=utf-8"]}),
        vcr_item(SSE_TEXT, headers={}),
    ]
    for interaction in read_interactions(write_yaml(tmp_path / "c.yaml", items)):
        assert isinstance(interaction, Interaction)
        assert interaction.response.events == SSE_EVENTS


def test_gemini_json_array_stream_gives_one_event_per_element(tmp_path: Path) -> None:
    chunks = [{"candidates": [{"index": 0}]}, {"candidates": [], "usageMetadata": {}}]
    pretty = json.dumps(chunks, indent=2)
    items = [
        vcr_item(gzip.compress(pretty.encode()), uri=GEMINI_STREAM_URL),
        vcr_item(
            format_sse([StreamEvent(None, c) for c in chunks]), uri=GEMINI_STREAM_URL + "?alt=sse"
        ),
        vcr_item(json.dumps({"error": {"code": 400}}), uri=GEMINI_STREAM_URL, status={"code": 400}),
        vcr_item(pretty, uri=GEMINI_STREAM_URL.replace("stream", "").replace(":G", ":g")),
    ]
    array, sse, error, not_a_stream = read_interactions(write_yaml(tmp_path / "c.yaml", items))
    expected = tuple(StreamEvent(None, chunk) for chunk in chunks)
    assert isinstance(array, Interaction) and array.response.events == expected
    assert isinstance(sse, Interaction) and sse.response.events == expected
    assert isinstance(error, Interaction) and error.response.events is None
    assert error.response.body == {"error": {"code": 400}} and error.response.status == 400
    assert isinstance(not_a_stream, Interaction) and not_a_stream.response.body == chunks


def test_format_is_detected_by_content_not_extension(tmp_path: Path) -> None:
    json_named_yaml = tmp_path / "really-json.yaml"
    json_named_yaml.write_text(
        json.dumps({"version": 1, "interactions": [vcr_item(json.dumps(REPLY))]}), encoding="utf-8"
    )
    yaml_named_json = write_yaml(tmp_path / "really-yaml.json", [vcr_item(json.dumps(REPLY))])
    for path in (json_named_yaml, yaml_named_json):
        assert only(read_interactions(path)).response.body == REPLY


def test_text_and_binary_bodies_are_kept_as_they_are(tmp_path: Path) -> None:
    items = [
        vcr_item("plain words", request_body=""),
        vcr_item(b"\x00\x00\x01\xffevent-stream-frame", request_body=b"\x80binary"),
    ]
    text, binary = read_interactions(write_yaml(tmp_path / "c.yaml", items))
    assert isinstance(text, Interaction) and isinstance(binary, Interaction)
    assert text.response.body == "plain words" and text.request.body is None
    assert binary.response.body == b"\x00\x00\x01\xffevent-stream-frame"
    assert binary.request.body == b"\x80binary"


def test_a_bad_interaction_is_reported_and_the_others_still_read(tmp_path: Path) -> None:
    corrupt = vcr_item(b"\x1f\x8b\x08broken", headers={"content-encoding": ["gzip"]})
    items: list[Any] = [
        vcr_item(json.dumps(REPLY)),
        {"request": {"uri": CHAT_URL}},
        corrupt,
        "junk",
    ]
    good, missing, bad_gzip, junk = read_interactions(write_yaml(tmp_path / "c.yaml", items))
    assert isinstance(good, Interaction)
    assert missing == UnreadableInteraction(
        1, "unexpected interaction shape: missing key 'response'"
    )
    assert isinstance(bad_gzip, UnreadableInteraction) and bad_gzip.index == 2
    assert "corrupt gzip body" in bad_gzip.reason
    assert isinstance(junk, UnreadableInteraction) and junk.index == 3


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read cassette"),
        (b"\xff\xfe\x00bad", "not a text cassette"),
        (b"interactions: [\n  {a: 1\n", "not a readable cassette"),
        (b"just: a mapping\n", "not a cassette: it holds no vcrpy"),
        (b"- !!python/object/apply:os.system ['true']\n", "not a readable cassette"),
    ],
)
def test_a_file_that_is_not_a_cassette_raises_input_error_naming_it(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "broken.yaml"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError) as raised:
        read_interactions(path)
    assert str(raised.value).startswith(str(path))
    assert message in str(raised.value)


def test_yaml_syntax_errors_carry_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("interactions:\n- request: {\n  uri: x\n- bad\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_interactions(path)
    assert raised.value.problems[0].line is not None


# --- fcreplay's own format -------------------------------------------------------------


def sample_interactions() -> list[Interaction]:
    request = RecordedRequest("POST", CHAT_URL, {"content-type": "application/json"}, REQUEST)
    return [
        Interaction(request, WireResponse(200, {"content-type": "application/json"}, REPLY)),
        Interaction(
            request,
            WireResponse(200, {"content-type": "text/event-stream"}, None, SSE_EVENTS),
        ),
        Interaction(
            RecordedRequest("POST", GEMINI_STREAM_URL, {}, {"contents": []}),
            WireResponse(200, {}, None, (StreamEvent(None, {"a": 1}), StreamEvent(None, [2]))),
        ),
        Interaction(request, WireResponse(502, {"content-type": "text/html"}, "<h1>Bad</h1>")),
        Interaction(
            RecordedRequest("GET", "https://example.test/x", {}, None),
            WireResponse(200, {}, b"\x00\xff"),
        ),
    ]


def test_write_then_read_gives_the_same_interactions_and_meta(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "new" / "folder" / "c-1.json", sample_interactions(), META)
    cassette = load_cassette(path)
    assert cassette.meta == META
    assert cassette.interactions == sample_interactions()
    assert [p.name for p in path.parent.iterdir()] == ["c-1.json"]  # no temp file left


def test_written_cassette_is_readable_json_in_the_documented_layout(tmp_path: Path) -> None:
    gzipped = Interaction(
        sample_interactions()[0].request,
        WireResponse(200, {"content-encoding": "gzip", "content-length": "9", "x-a": "1"}, REPLY),
    )
    path = write_cassette(tmp_path / "c.json", [*sample_interactions(), gzipped], META)
    text = path.read_text(encoding="utf-8")
    assert "Où est ma commande" in text  # ensure_ascii=False: readable in a diff
    assert text.count("\n") > 50  # indented, one value per line
    document = json.loads(text)
    assert document["version"] == 1
    assert document["fcreplay"] == {
        "format": 2,
        "target": "sim-openai",
        "adapter": "openai_chat",
        "variant": "auto",
        "case_id": "c-1",
        "fcreplay_version": META.fcreplay_version,
    }
    plain, sse, array, html, binary, decoded = document["interactions"]
    assert plain["request"] == {
        "method": "POST",
        "uri": CHAT_URL,
        "headers": {"content-type": ["application/json"]},
        "parsed_body": REQUEST,
    }
    assert plain["response"]["status"] == {"code": 200, "message": "OK"}
    assert plain["response"]["parsed_body"] == REPLY
    assert sse["response"]["sse"] == [
        {"event": "message_start", "data": {"type": "message_start"}},
        {"event": None, "data": "[DONE]"},
    ]
    assert array["response"]["parsed_body"] == [{"a": 1}, [2]]
    assert html["response"]["body"] == {"string": "<h1>Bad</h1>"}
    assert binary["response"]["body"] == {"base64_string": "AP8="}
    assert "body" not in binary["request"] and "parsed_body" not in binary["request"]
    # The body is stored decoded, so headers about its wire encoding would be wrong.
    assert decoded["response"]["headers"] == {"x-a": ["1"]}


def test_labels_are_kept_beside_request_and_response(tmp_path: Path) -> None:
    first, second = sample_interactions()[:2]
    labelled = [replace(first, label={"attempt": 2, "step": 0}), second]
    text = cassette_text(labelled, META)
    assert json.loads(text)["interactions"][0]["label"] == {"attempt": 2, "step": 0}
    assert "label" not in json.loads(text)["interactions"][1]
    path = tmp_path / "c.json"
    write_text_atomically(path, text)
    assert read_interactions(path) == labelled
    assert read_interactions(path) != [first, second]


def test_an_unknown_own_format_version_is_an_input_error(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.json", [], META)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["fcreplay"]["format"] = 99
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError, match="format 99"):
        read_interactions(path)


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.json", sample_interactions(), META)
    before = path.read_text(encoding="utf-8")
    nan = Interaction(sample_interactions()[0].request, WireResponse(200, {}, {"x": float("nan")}))
    with pytest.raises(ValueError):
        write_cassette(path, [nan], META)
    assert path.read_text(encoding="utf-8") == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]


def test_reading_the_own_format_imports_neither_vcr_nor_yaml(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.json", sample_interactions() * 3, META)
    code = (
        "import sys; from fcreplay.cassettes.store import read_interactions; "
        f"assert len(read_interactions({str(path)!r})) == 15; "
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('vcr', 'yaml')); "
        "print(heavy)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


# --- vcrpy replays fcreplay cassettes ----------------------------------------------------


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network was reached")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_sockets_are_really_blocked(no_network: None) -> None:
    with pytest.raises(AssertionError, match="network"), httpx.Client() as client:
        client.post("http://127.0.0.1:9/", json={})


def test_vcrpy_replays_an_fcreplay_cassette_offline(tmp_path: Path, no_network: None) -> None:
    first, *others = sample_interactions()[:3]
    labelled = [replace(first, label={"attempt": 1, "step": 0}), *others]
    path = write_cassette(tmp_path / "c.json", labelled, META)
    recorder = vcr.VCR(record_mode="none")
    recorder.register_serializer(SERIALIZER_NAME, SERIALIZER)
    with recorder.use_cassette(str(path), serializer=SERIALIZER_NAME), httpx.Client() as client:
        plain = client.post(CHAT_URL, json=REQUEST)
        stream = client.post(CHAT_URL, json=REQUEST)
        array = client.post(GEMINI_STREAM_URL, json={"contents": []})
    assert plain.status_code == 200
    assert plain.json() == REPLY
    assert stream.headers["content-type"] == "text/event-stream"
    assert stream.text == format_sse(SSE_EVENTS)
    assert array.json() == [{"a": 1}, [2]]


def test_serializer_writes_the_own_format_from_vcrpy_dicts() -> None:
    vcr_dict = {
        "version": 1,
        "interactions": [
            vcr_item(SSE_TEXT, headers={"content-type": ["text/event-stream"]}),
            vcr_item(json.dumps(REPLY), headers={"content-length": ["99"]}),
        ],
    }
    text = SERIALIZER.serialize(vcr_dict)
    document = json.loads(text)
    assert "fcreplay" in document
    sse, plain = document["interactions"]
    assert sse["request"]["parsed_body"] == REQUEST
    assert sse["response"]["sse"][1] == {"event": None, "data": "[DONE]"}
    assert plain["response"] == {
        "status": {"code": 200, "message": "OK"},
        "headers": {},
        "parsed_body": REPLY,
    }
    back = SERIALIZER.deserialize(text)["interactions"]
    assert back[0]["response"]["body"]["string"] == SSE_TEXT
    assert json.loads(back[1]["response"]["body"]["string"]) == REPLY
    assert json.loads(back[1]["request"]["body"]) == REQUEST


def test_serializer_passes_plain_vcrpy_json_through() -> None:
    plain = {"version": 1, "interactions": [vcr_item("x")]}
    assert SERIALIZER.deserialize(json.dumps(plain)) == plain


def test_a_truncated_json_cassette_names_the_json_error_and_line(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.json", sample_interactions(), META)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(InputError, match="invalid JSON") as raised:
        read_interactions(path)
    line = raised.value.problems[0].line
    assert line is not None and line > 10


def test_vcrpy_records_into_the_own_format_through_the_serializer(
    tmp_path: Path, no_network: None
) -> None:
    def provider(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=SSE_TEXT.encode()
        )

    path = tmp_path / "recorded.json"
    recorder = vcr.VCR(record_mode="once")
    recorder.register_serializer(SERIALIZER_NAME, SERIALIZER)
    with (
        recorder.use_cassette(str(path), serializer=SERIALIZER_NAME),
        httpx.Client(transport=httpx.MockTransport(provider)) as client,
    ):
        assert client.post(CHAT_URL, json=REQUEST).text == SSE_TEXT
    cassette = load_cassette(path)
    assert cassette.meta is not None
    interaction = only(cassette.interactions)
    assert interaction.request.body == REQUEST
    assert interaction.response.events == SSE_EVENTS
    assert json.loads(path.read_text(encoding="utf-8"))["interactions"][0]["response"]["sse"]
