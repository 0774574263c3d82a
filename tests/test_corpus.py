"""Acceptance over the corpus of real cassettes other projects recorded (../shared/corpus).

Every interaction of every file must come out of `fcreplay inspect`, and for every
successful model call the calls fcreplay reports must equal the calls in the
recorded body. The expectation comes from the official SDKs (openai, anthropic,
google-genai) reading the same body or stream their own way, so it does not share
a line of code with fcreplay's adapters.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message
from botocore.eventstream import EventStreamBuffer
from google.genai import types as genai
from ollama import ChatResponse
from openai._models import construct_type
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

from fcreplay.cassettes import eventstream
from fcreplay.cassettes.inspection import OTHER, inspect_file
from fcreplay.cassettes.store import Interaction, read_interactions
from fcreplay.cli import run
from fcreplay.neutral import StreamEvent

CORPUS = Path(__file__).parents[1] / ".." / "shared" / "corpus"

if not CORPUS.is_dir():
    pytest.skip(f"no corpus at {CORPUS}", allow_module_level=True)

FILES = sorted(path for path in CORPUS.glob("*/*") if path.is_file())
Call = tuple[str, Any]
"""(name, arguments): the decoded JSON object, or the raw text when it is not one."""

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def raw_interactions(path: Path) -> list[dict[str, Any]]:
    """The interactions as the raw YAML/JSON says, without fcreplay's reader."""
    document = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER)
    interactions: list[dict[str, Any]] = document["interactions"]
    return interactions


def file_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


# --- the oracle: official SDKs ----------------------------------------------------------


def arguments(raw: Any) -> Any:
    """Arguments as a JSON object when they are one; "no arguments" is the empty object."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        return value if isinstance(value, dict) else raw
    return raw


def chat_body(body: Any) -> list[Call]:
    return _chat_calls(ChatCompletion.model_construct(**body).choices[0].message)


def chat_stream(events: Sequence[StreamEvent]) -> list[Call]:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for event in events:
        if isinstance(event.data, dict) and event.event is None:
            state.handle_chunk(ChatCompletionChunk.model_construct(**_indexed(event.data)))
    return _chat_calls(state.get_final_completion().choices[0].message)


def _chat_calls(message: Any) -> list[Call]:
    calls = [(call.function.name, call.function.arguments) for call in message.tool_calls or []]
    if message.function_call is not None:  # the deprecated `functions` API: still a call
        calls.append((message.function_call.name, message.function_call.arguments))
    return calls


def _indexed(chunk: dict[str, Any]) -> dict[str, Any]:
    """Mistral streams whole tool calls without the `index` the spec requires; the SDK
    needs it, so number them by position (a data fix-up, not a reassembly rule)."""
    chunk = copy.deepcopy(chunk)
    for choice in chunk.get("choices") or []:
        for position, call in enumerate((choice.get("delta") or {}).get("tool_calls") or []):
            call.setdefault("index", position)
    return chunk


def responses_body(body: Any) -> list[Call]:
    return _function_calls(Response.model_construct(**body).output)


def responses_stream(events: Sequence[StreamEvent]) -> list[Call]:
    final, done = None, []
    for event in events:
        if not isinstance(event.data, dict):
            continue
        parsed: Any = construct_type(type_=ResponseStreamEvent, value=event.data)
        if parsed.type in ("response.completed", "response.incomplete"):
            final = parsed.response
        elif parsed.type == "response.output_item.done":
            done.append(parsed.item)
    return _function_calls(final.output if final is not None else done)


def _function_calls(items: Sequence[Any]) -> list[Call]:
    return [(item.name, item.arguments) for item in items if item.type == "function_call"]


def anthropic_body(body: Any) -> list[Call]:
    message = Message.model_construct(**body)
    return [(block.name, block.input) for block in message.content if block.type == "tool_use"]


def anthropic_stream(events: Sequence[StreamEvent]) -> list[Call]:
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in events:
        if isinstance(event.data, dict) and event.data.get("type") != "ping":
            snapshot = accumulate_event(
                event=event.data,  # type: ignore[arg-type]
                current_snapshot=snapshot,
                json_bufs=buffers,
            )
    return [(block.name, block.input) for block in snapshot.content if block.type == "tool_use"]


def gemini_chunks(chunks: Sequence[Any]) -> list[Call]:
    calls: list[Call] = []
    for chunk in chunks:
        response = genai.GenerateContentResponse._from_response(
            response=copy.deepcopy(chunk), kwargs={}
        )
        calls.extend((str(call.name), call.args) for call in response.function_calls or [])
    return calls


def bedrock_body(body: Any) -> list[Call]:
    content = body["output"]["message"]["content"]
    return [(b["toolUse"]["name"], b["toolUse"]["input"]) for b in content if "toolUse" in b]


def bedrock_stream(events: Sequence[StreamEvent]) -> list[Call]:
    names: dict[int, str] = {}
    inputs: dict[int, str] = {}
    for event in events:
        index = event.data.get("contentBlockIndex")
        if event.event == "contentBlockStart" and "toolUse" in event.data["start"]:
            names[index] = event.data["start"]["toolUse"]["name"]
        elif event.event == "contentBlockDelta" and "toolUse" in event.data["delta"]:
            inputs[index] = inputs.get(index, "") + event.data["delta"]["toolUse"]["input"]
    return [(names[i], inputs.get(i, "")) for i in sorted(names)]


def ollama_calls(message: Any) -> list[Call]:
    return [(call.function.name, call.function.arguments) for call in message.tool_calls or []]


def ollama_stream(events: Sequence[StreamEvent]) -> list[Call]:
    return [
        call
        for event in events
        for call in ollama_calls(ChatResponse.model_validate(event.data).message)
    ]


ORACLES: dict[str, tuple[Callable[[Any], list[Call]], Callable[[Any], list[Call]]]] = {
    "openai_chat": (chat_body, chat_stream),
    "openai_responses": (responses_body, responses_stream),
    "anthropic": (anthropic_body, anthropic_stream),
    "gemini": (
        lambda body: gemini_chunks([body]),
        lambda events: gemini_chunks([e.data for e in events]),
    ),
    "bedrock_converse": (bedrock_body, bedrock_stream),
    "ollama": (lambda body: ollama_calls(ChatResponse.model_validate(body).message), ollama_stream),
}
"""api -> (calls of a JSON body, calls of a stream)."""

OVERRIDES: dict[tuple[str, int], tuple[list[Call], str]] = {
    (
        "openai/llm__tests--cassettes--test_tools_streaming--test_tools_streaming_variant_a.yaml",
        0,
    ): (
        [("llm_version", {})],
        "the server (Novita via OpenRouter) repeats the full name in every delta of call "
        "index 0; the OpenAI SDK appends it ('llm_versionllm_version'), while the recording "
        "client executed one `llm_version` call (see the tool_calls of interaction 1's request)",
    ),
}
"""Cases where the SDK's own reading is demonstrably not what was called, with the evidence."""


def stream_error(events: Sequence[StreamEvent]) -> bool:
    """Whether the stream carries an error event (then the answer is an error, not calls)."""
    for event in events:
        data = event.data if isinstance(event.data, dict) else {}
        if event.event == "error" or data.get("type") in ("error", "response.failed"):
            return True
        if data.get("error"):
            return True
    return False


def expected(api: str, interaction: Interaction) -> list[Call] | str:
    """The calls the SDK reads in a 2xx response, or "error" for an in-stream error."""
    body_calls, stream_calls = ORACLES[api]
    events = interaction.response.events
    if events is not None:
        if stream_error(events):
            return "error"
        calls = stream_calls(events)
    else:
        calls = body_calls(interaction.response.body)
    return [(name, arguments(raw)) for name, raw in calls]


# --- parametrization --------------------------------------------------------------------

XFAIL: dict[tuple[str, int], str] = {}
"""Adapter bugs found by this test: (file id, index) -> what disagrees. Keep them visible."""


def model_calls() -> list[Any]:
    params = []
    for path in FILES:
        for index, item in enumerate(raw_interactions(path)):
            status = item["response"]["status"]
            code = status["code"] if isinstance(status, dict) else status
            uri = item["request"]["uri"].split("#", 1)[0]
            if not 200 <= int(code) < 300 or not _is_model_uri(uri):
                continue
            key = (file_id(path), index)
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[key])] if key in XFAIL else []
            params.append(pytest.param(path, index, id=f"{key[0]}#{index}", marks=marks))
    return params


MODEL_PATHS = (
    "/chat/completions",
    "/responses",
    "/messages",
    "/converse",
    "/converse-stream",
    "/api/chat",
)


def _is_model_uri(uri: str) -> bool:
    path = uri.split("?", 1)[0]
    return (
        ":generateContent" in path or ":streamGenerateContent" in path or path.endswith(MODEL_PATHS)
    )


# --- tests ------------------------------------------------------------------------------


def test_the_corpus_is_all_there() -> None:
    assert len(FILES) == 67
    assert sum(len(raw_interactions(path)) for path in FILES) == 128
    assert len(model_calls()) == 119  # 2xx model calls; the rest: 7 errors, 2 other APIs


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_every_interaction_is_reported_in_file_order(path: Path) -> None:
    records = inspect_file(str(path))
    raw = raw_interactions(path)
    assert [record["index"] for record in records] == list(range(len(raw)))
    for record, item in zip(records, raw, strict=True):
        assert record["file"] == str(path)
        assert record["status"] == item["response"]["status"]["code"]
        error = record["error"]
        assert error is None or error["type"] != "unreadable", error
        if record["api"] == OTHER:
            assert record["decision"] is None and error is None
        else:
            assert (record["decision"] is None) != (error is None), record


@pytest.mark.parametrize(("path", "index"), model_calls())
def test_calls_equal_what_the_official_sdk_reads(path: Path, index: int) -> None:
    interaction = read_interactions(path)[index]
    assert isinstance(interaction, Interaction)
    record = inspect_file(str(path))[index]
    api = record["api"]
    key = (file_id(path), index)
    want = OVERRIDES[key][0] if key in OVERRIDES else expected(api, interaction)
    if want == "error":
        assert record["error"] is not None and record["error"]["type"] != "unreadable", record
        return
    assert record["error"] is None, record["error"]
    got = [
        (
            call["name"],
            call["arguments"] if call["arguments"] is not None else call["raw_arguments"],
        )
        for call in record["decision"]["calls"]
    ]
    assert got == want
    kind = record["decision"]["kind"]
    assert kind in (("tool_call", "invalid") if want else ("text", "refusal", "invalid"))


def test_inspect_over_the_whole_corpus_covers_every_interaction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    paths = [str(path) for path in FILES]
    assert run(["inspect", "--format", "json", *paths]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    records = [json.loads(line) for line in out.splitlines()]
    seen = [(record["file"], record["index"]) for record in records]
    want = [(path, index) for path in paths for index in range(len(raw_interactions(Path(path))))]
    assert seen == want
    assert len(records) == 128


def test_the_aws_event_stream_decodes_as_botocore_decodes_it() -> None:
    """The framing itself, checked against botocore's parser on every recorded stream."""
    streams = [
        item["response"]["body"]["string"]
        for path in FILES
        for item in raw_interactions(path)
        if item["request"]["uri"].endswith("/converse-stream")
    ]
    assert streams
    for raw in streams:
        buffer = EventStreamBuffer()
        buffer.add_data(raw)
        theirs = [
            (message.headers[":event-type"], json.loads(message.payload)) for message in buffer
        ]
        ours = [(event.event, event.data) for event in eventstream.decode(raw)]
        assert ours == theirs
        again = b"".join(eventstream.encode(eventstream.decode(raw)))
        assert eventstream.decode(again) == eventstream.decode(raw)
