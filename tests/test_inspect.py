"""`fcreplay inspect`: one record per interaction, in file order, whatever goes wrong.

The bodies below are synthetic, modelled on the reference's examples.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from fcreplay.cassettes.inspection import api_of, render_text
from fcreplay.cassettes.store import (
    CassetteMeta,
    Interaction,
    RecordedRequest,
    write_cassette,
)
from fcreplay.cli import cli, run
from fcreplay.neutral import StreamEvent, WireResponse

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
CHAT_URL = "https://api.openai.com/v1/chat/completions"
ANTHROPIC_STREAM = (
    StreamEvent(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    ),
    StreamEvent(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {},
            },
        },
    ),
    StreamEvent(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"location":'},
        },
    ),
    StreamEvent(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": ' "Paris"}'},
        },
    ),
    StreamEvent("content_block_stop", {"type": "content_block_stop", "index": 0}),
    StreamEvent(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
    ),
    StreamEvent("message_stop", {"type": "message_stop"}),
)
CHAT_TEXT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-test",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Your order ships today."},
            "finish_reason": "stop",
        }
    ],
}
RATE_LIMITED = {
    "error": {
        "message": "Rate limit reached",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}


def post(url: str, body: Any) -> RecordedRequest:
    return RecordedRequest("POST", url, {"content-type": "application/json"}, body)


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    interactions = [
        Interaction(
            post(ANTHROPIC_URL, {"model": "claude-test", "stream": True, "messages": []}),
            WireResponse(200, {"content-type": "text/event-stream"}, None, ANTHROPIC_STREAM),
        ),
        Interaction(post(CHAT_URL, {"model": "gpt-test"}), WireResponse(200, {}, CHAT_TEXT)),
        Interaction(post(CHAT_URL, {"model": "gpt-test"}), WireResponse(429, {}, RATE_LIMITED)),
        Interaction(post("https://api.cohere.com/v2/chat", {}), WireResponse(200, {}, {})),
    ]
    meta = CassetteMeta(target="t", adapter="anthropic", variant="auto", case_id="c")
    return write_cassette(tmp_path / "c.json", interactions, meta)


@pytest.fixture
def broken_cassette(tmp_path: Path) -> Path:
    good = {
        "request": {"method": "POST", "uri": CHAT_URL, "headers": {}, "body": "{}"},
        "response": {
            "status": {"code": 200},
            "headers": {},
            "body": {"string": json.dumps(CHAT_TEXT)},
        },
    }
    document = {"version": 1, "interactions": [{"request": good["request"]}, good]}
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(cli, ["inspect", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_json_format_gives_one_record_per_interaction(cassette: Path) -> None:
    result = invoke("--format", "json", str(cassette))
    records = [json.loads(line) for line in result.output.splitlines()]
    file = str(cassette)
    assert records[0] == {
        "file": file,
        "index": 0,
        "api": "anthropic",
        "status": 200,
        "stream": True,
        "decision": {
            "kind": "tool_call",
            "text": None,
            "finish_reason": "tool_use",
            "calls": [
                {
                    "call_id": "toolu_1",
                    "name": "get_weather",
                    "arguments": {"location": "Paris"},
                    "raw_arguments": {"location": "Paris"},
                }
            ],
        },
        "error": None,
    }
    assert records[1]["decision"] == {
        "kind": "text",
        "text": "Your order ships today.",
        "finish_reason": "stop",
        "calls": [],
    }
    assert records[1]["stream"] is False and records[1]["api"] == "openai_chat"
    assert records[2]["decision"] is None
    assert records[2]["error"]["status"] == 429
    assert records[2]["error"]["code"] == "rate_limit_exceeded"
    assert records[2]["error"]["retryable"] is True
    assert records[3] == {
        "file": file,
        "index": 3,
        "api": "other",
        "status": 200,
        "stream": False,
        "decision": None,
        "error": None,
    }


def test_text_format_is_one_readable_line_per_interaction(cassette: Path) -> None:
    lines = invoke(str(cassette)).output.splitlines()
    call = 'get_weather({"location":"Paris"})'
    assert lines[0] == f"{cassette}#0 anthropic 200 stream tool_call {call} [tool_use]"
    assert lines[1] == f'{cassette}#1 openai_chat 200 text "Your order ships today." [stop]'
    assert lines[2].startswith(f"{cassette}#2 openai_chat 429 error ")
    assert "Rate limit reached" in lines[2] and "(retryable)" in lines[2]
    assert lines[3] == f"{cassette}#3 other 200 (not a model call fcreplay reads)"
    assert len(lines) == 4


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_an_unreadable_interaction_is_reported_and_the_rest_still_comes_out(
    broken_cassette: Path, output_format: str
) -> None:
    lines = invoke("--format", output_format, str(broken_cassette)).output.splitlines()
    assert len(lines) == 2
    if output_format == "json":
        bad, good = (json.loads(line) for line in lines)
        assert bad["index"] == 0 and bad["decision"] is None and bad["status"] is None
        assert bad["error"] == {
            "type": "unreadable",
            "message": "unexpected interaction shape: missing key 'response'",
        }
        assert good["index"] == 1 and good["decision"]["kind"] == "text"
    else:
        assert lines[0] == (
            f"{broken_cassette}#0 other unreadable: "
            "unexpected interaction shape: missing key 'response'"
        )
        assert lines[1].startswith(f"{broken_cassette}#1 openai_chat 200 text")


def test_a_file_that_cannot_be_opened_is_reported_and_the_others_still_come_out(
    cassette: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.yaml"
    not_a_cassette = tmp_path / "notes.yaml"
    not_a_cassette.write_text("just: notes\n", encoding="utf-8")
    code = run(["inspect", "--format", "json", str(missing), str(cassette), str(not_a_cassette)])
    out, err = capsys.readouterr()
    assert code == 0  # the readable file was read
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["file"], r["index"]) for r in records] == [
        (str(missing), None),
        *((str(cassette), index) for index in range(4)),
        (str(not_a_cassette), None),
    ]
    assert records[0]["error"] == {
        "type": "unreadable_file",
        "message": "cannot read cassette: No such file or directory",
    }
    assert records[-1]["error"]["message"].startswith("not a cassette: it holds no vcrpy")
    assert "2 of 3 files could not be read" in err
    run(["inspect", str(missing), str(cassette)])
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{missing} unreadable: cannot read cassette: No such file or directory"
    )


def test_exit_code_is_2_only_when_no_file_could_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.yaml"
    assert run(["inspect", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == f"{missing} unreadable: cannot read cassette: No such file or directory\n"
    assert f"{missing}: cannot read cassette" in err


def test_exit_code_is_0_when_every_file_opens(cassette: Path, broken_cassette: Path) -> None:
    assert run(["inspect", str(cassette), str(broken_cassette)]) == 0


def test_a_folder_stands_for_the_cassettes_under_it(
    cassette: Path, broken_cassette: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (cassette.parent / "readme.txt").write_text("not a cassette", encoding="utf-8")
    assert run(["inspect", "--format", "json", str(cassette.parent)]) == 0
    files = [json.loads(line)["file"] for line in capsys.readouterr().out.splitlines()]
    assert files == [str(broken_cassette)] * 2 + [str(cassette)] * 4


def test_inspect_needs_a_path_and_a_known_format() -> None:
    assert run(["inspect"]) == 2
    assert run(["inspect", "--format", "xml", "x.yaml"]) == 2


def test_a_url_fragment_does_not_hide_the_api() -> None:
    assert api_of("https://api.mistral.ai/v1/chat/completions#stream") == "openai_chat"
    assert api_of("https://bedrock-runtime.us-east-1.amazonaws.com/model/x/converse") == (
        "bedrock_converse"
    )
    assert api_of("http://127.0.0.1:11434/api/chat") == "ollama"
    assert api_of("https://api.cohere.com/v2/chat") == "other"


def test_text_rendering_shows_invalid_arguments_as_sent() -> None:
    record = {
        "file": "f",
        "index": 2,
        "api": "openai_chat",
        "status": 200,
        "stream": False,
        "decision": {
            "kind": "invalid",
            "text": None,
            "finish_reason": "length",
            "calls": [
                {"call_id": "c", "name": "quote", "arguments": None, "raw_arguments": '{"w": 1.'}
            ],
        },
        "error": None,
    }
    assert render_text(record) == 'f#2 openai_chat 200 invalid quote({"w": 1.) [length]'


def test_help_imports_no_cassette_library_or_adapter() -> None:
    code = (
        "import sys; from fcreplay.cli import run; run(['--help']); run(['inspect', '--help']); "
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('vcr', 'yaml') "
        "or m.startswith('fcreplay.adapters') "
        "or m in ('fcreplay.cassettes.store', 'fcreplay.cassettes.inspection')]; "
        "print(sorted(heavy), file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert "inspect" in result.stdout
    assert result.stderr.strip() == "[]"
