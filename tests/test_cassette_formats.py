"""Recording formats beyond vcrpy's: HAR 1.2, pydantic-ai's 2026 layout and Ruby VCR.

Every file here is written by hand from the format's described shape (no recording is
copied), with one OpenAI Chat tool call whose body is stored in each encoding the
format allows: plain text, parsed, base64 and gzip.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fcreplay.cassettes.inspection import inspect_file
from fcreplay.cassettes.store import Interaction, read_interactions
from fcreplay.cli import run

URI = "https://api.openai.com/v1/chat/completions"
REQUEST = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Где ORD-123456?"}]}
ANSWER = {
    "id": "chatcmpl-x",
    "object": "chat.completion",
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_order", "arguments": '{"order_id":"ORD-123456"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
}
TEXT = json.dumps(ANSWER, ensure_ascii=False)
GZIPPED = base64.b64encode(gzip.compress(TEXT.encode("utf-8"))).decode("ascii")
PLAIN_B64 = base64.b64encode(TEXT.encode("utf-8")).decode("ascii")


def har(content: dict[str, Any], headers: list[dict[str, str]]) -> dict[str, Any]:
    entry = {
        "startedDateTime": "2026-01-01T00:00:00.000Z",
        "time": 12,
        "request": {
            "method": "POST",
            "url": URI,
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "queryString": [],
            "cookies": [],
            "postData": {"mimeType": "application/json", "text": json.dumps(REQUEST)},
            "headersSize": -1,
            "bodySize": -1,
        },
        "response": {
            "status": 200,
            "statusText": "OK",
            "httpVersion": "HTTP/1.1",
            "headers": headers,
            "cookies": [],
            "content": {"mimeType": "application/json", **content},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 12, "receive": 0},
    }
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "Polly.JS", "version": "6"},
            "entries": [entry],
        }
    }


def pydantic_2026(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": URI,
                    "headers": {"content-type": ["application/json"]},
                    "body": {"type": "json", "content": REQUEST},
                },
                "response": {
                    "status": 200,
                    "headers": {"content-type": ["application/json"]},
                    "body": body,
                },
            }
        ],
        "version": 1,
    }


def ruby_vcr(body: dict[str, Any], headers: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "http_interactions": [
            {
                "request": {
                    "method": "post",
                    "uri": URI,
                    "body": {"encoding": "UTF-8", "string": json.dumps(REQUEST)},
                    "headers": {"Content-Type": ["application/json"], "Authorization": ["<KEY>"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"Content-Type": ["application/json"], **headers},
                    "body": body,
                    "http_version": None,
                },
                "recorded_at": "Thu, 01 Jan 2026 00:00:00 GMT",
            }
        ],
        "recorded_with": "VCR 6.3.1",
    }


GZIP_HEADER = {"name": "Content-Encoding", "value": "gzip"}
DOCUMENTS: dict[str, tuple[str, Any]] = {
    "har-text": ("har", har({"text": TEXT}, [])),
    "har-base64": ("har", har({"text": PLAIN_B64, "encoding": "base64"}, [])),
    "har-gzip": ("har", har({"text": GZIPPED, "encoding": "base64"}, [GZIP_HEADER])),
    "pydantic-json": ("yaml", pydantic_2026({"type": "json", "content": ANSWER})),
    "pydantic-text": ("yaml", pydantic_2026({"type": "text", "content": TEXT})),
    "pydantic-base64": ("yaml", pydantic_2026({"type": "base64", "content": PLAIN_B64})),
    "ruby-string": ("yml", ruby_vcr({"encoding": "UTF-8", "string": TEXT}, {})),
    "ruby-base64": ("yml", ruby_vcr({"encoding": "ASCII-8BIT", "base64_string": PLAIN_B64}, {})),
    "ruby-gzip": (
        "yml",
        ruby_vcr(
            {"encoding": "ASCII-8BIT", "base64_string": GZIPPED}, {"Content-Encoding": ["gzip"]}
        ),
    ),
}


def write(tmp_path: Path, name: str) -> Path:
    suffix, document = DOCUMENTS[name]
    path = tmp_path / f"{name}.{suffix}"
    if suffix == "har":
        path.write_text(json.dumps(document), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_each_format_and_encoding_reads_to_the_same_interaction(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, name)
    (interaction,) = read_interactions(path)
    assert isinstance(interaction, Interaction)
    assert (interaction.request.method, interaction.request.uri) == ("POST", URI)
    assert interaction.request.body == REQUEST
    assert interaction.response.status == 200
    assert interaction.response.body == ANSWER
    (record,) = inspect_file(str(path))
    assert record["api"] == "openai_chat"
    assert record["decision"]["kind"] == "tool_call"
    assert record["decision"]["calls"][0]["arguments"] == {"order_id": "ORD-123456"}


def test_inspect_reads_a_folder_of_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in DOCUMENTS:
        write(tmp_path, name)
    assert run(["inspect", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(DOCUMENTS)
    assert all(
        ' openai_chat 200 tool_call get_order({"order_id":"ORD-123456"})' in line for line in lines
    )


def test_an_unknown_typed_body_is_one_unreadable_interaction(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(
        yaml.safe_dump(pydantic_2026({"type": "msgpack", "content": "…"})), encoding="utf-8"
    )
    (record,) = inspect_file(str(path))
    assert record["error"] == {
        "type": "unreadable",
        "message": "unknown body type 'msgpack' (with str)",
    }


def test_a_har_entry_without_a_response_is_unreadable_and_the_rest_read(tmp_path: Path) -> None:
    document = har({"text": TEXT}, [])
    document["log"]["entries"].insert(0, {"request": {"method": "GET", "url": URI}})
    path = tmp_path / "partial.har"
    path.write_text(json.dumps(document), encoding="utf-8")
    first, second = inspect_file(str(path))
    assert first["error"]["type"] == "unreadable"
    assert second["decision"]["kind"] == "tool_call"
