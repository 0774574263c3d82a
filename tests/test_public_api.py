"""The declared public API: every name in __all__ resolves, the documented ones exist."""

from __future__ import annotations

import inspect

import fcreplay


def test_all_names_resolve() -> None:
    for name in fcreplay.__all__:
        assert getattr(fcreplay, name) is not None


def test_documented_api_is_public() -> None:
    required = {
        "load_contract",
        "load_cases",
        "ToolCall",
        "Decision",
        "Finding",
        "validate_call",
        "validate_decision",
    }
    assert required <= set(fcreplay.__all__)
    call = fcreplay.ToolCall(call_id="c", name="get_order", arguments={}, raw_arguments="{}")
    assert call.name == "get_order"
    parameters = list(inspect.signature(fcreplay.validate_call).parameters)
    assert parameters == ["call", "contract", "expected"]
    assert inspect.signature(fcreplay.validate_call).parameters["expected"].default is None
    assert hasattr(fcreplay.Finding, "__dataclass_fields__")
    assert "code" in fcreplay.Finding.__dataclass_fields__


def test_the_adapter_seam_is_public() -> None:
    from fcreplay.adapters import gemini

    parts = (fcreplay.ClientAdapter, fcreplay.ReadBackAdapter, fcreplay.ServerAdapter)
    assert all(isinstance(gemini, part) for part in parts)  # a module is an adapter
    assert not any(isinstance(object(), part) for part in parts)
    assert isinstance(gemini.CAPABILITIES, fcreplay.Capabilities)
    assert isinstance(gemini.CAPABILITIES.stream_path, fcreplay.StreamPath)
    assert "name" in inspect.signature(fcreplay.register_adapter).parameters


def test_public_types_are_frozen() -> None:
    names = ("ToolCall", "Decision", "Finding", "ToolSpec", "Contract", "Case", "Capabilities")
    for name in (*names, "StreamPath"):
        params = getattr(fcreplay, name).__dataclass_params__
        assert params.frozen, name
