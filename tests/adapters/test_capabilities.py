"""Each built-in adapter's declared Capabilities agree with the requests it builds."""

from __future__ import annotations

import pytest

from fcreplay.adapters.capabilities import TOOL_MODES, Capabilities, StreamPath
from fcreplay.adapters.registry import BUILT_IN, api_for_url, get_adapter
from fcreplay.cassettes.bodies import is_json_array_stream
from fcreplay.inputs.contract import Contract
from fcreplay.neutral import Message, RequestSettings, ToolChoice


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_the_conversation_keys_are_the_keys_a_new_turn_changes(
    name: str, contract: Contract
) -> None:
    adapter = get_adapter(name)
    for tools, choice in (([], ToolChoice("no_tools")), (list(contract.tools), ToolChoice())):
        settings = RequestSettings(choice, parallel_tool_calls=False)
        one = adapter.build_request("m", [Message("user", "one")], tools, settings).body
        two = adapter.build_request("m", [Message("user", "two")], tools, settings).body
        changed = {key for key in one.keys() | two.keys() if one.get(key) != two.get(key)}
        assert changed == adapter.CAPABILITIES.conversation_keys


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_the_parallel_knob_is_sent_in_exactly_the_declared_modes(
    name: str, contract: Contract
) -> None:
    adapter = get_adapter(name)
    for mode in sorted(TOOL_MODES - {"no_tools"}):  # no tools: no policy to carry
        choice = ToolChoice(mode, "get_order" if mode == "forced" else None)
        settings = RequestSettings(choice, parallel_tool_calls=False)
        request = adapter.build_request("m", [Message("user", "?")], contract.tools, settings)
        sent = adapter.read_request(request.body, request.path).parallel_tool_calls
        assert (sent is False) == (mode in adapter.CAPABILITIES.parallel_knob), mode


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_the_url_markers_find_the_adapter_from_its_own_requests(
    name: str, stream: bool, contract: Contract
) -> None:
    adapter = get_adapter(name)
    settings = RequestSettings(stream=stream)
    request = adapter.build_request("m", [Message("user", "?")], contract.tools, settings)
    url = adapter.DEFAULT_BASE_URL + request.path
    assert api_for_url(url) == name
    declared = adapter.CAPABILITIES.stream_path
    assert adapter.CAPABILITIES.streams_by_url(url) == (declared is not None and stream)
    assert not is_json_array_stream(url)  # the adapters ask for SSE


def test_a_stream_path_without_its_sse_query_is_a_json_array() -> None:
    capabilities = Capabilities(stream_path=StreamPath(":stream", sse_query=("alt", "sse")))
    assert capabilities.json_array_stream("https://h/m:stream")
    assert capabilities.json_array_stream("https://h/m:stream?key=k&alt=json")
    assert not capabilities.json_array_stream("https://h/m:stream?key=k&alt=sse")
    assert not capabilities.json_array_stream("https://h/m:generate")
    assert not Capabilities(stream_path=StreamPath(":stream")).json_array_stream(
        "https://h/m:stream"
    )
    assert is_json_array_stream("https://g/v1beta/models/m:streamGenerateContent?key=k")
    assert not is_json_array_stream("https://example.com/v1/other")
