"""fcreplay: record, replay and regression-test LLM function calling.

The public Python API is listed in `__all__`; names load on first use so that
`import fcreplay` (and `fcreplay --help`) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fcreplay.version import __version__

if TYPE_CHECKING:
    from fcreplay.adapters.capabilities import Capabilities as Capabilities
    from fcreplay.adapters.capabilities import StreamPath as StreamPath
    from fcreplay.adapters.protocol import ClientAdapter as ClientAdapter
    from fcreplay.adapters.protocol import ReadBackAdapter as ReadBackAdapter
    from fcreplay.adapters.protocol import ServerAdapter as ServerAdapter
    from fcreplay.adapters.registry import register_adapter as register_adapter
    from fcreplay.canonical import canonical_json as canonical_json
    from fcreplay.decision import Decision as Decision
    from fcreplay.decision import ProviderError as ProviderError
    from fcreplay.decision import ToolCall as ToolCall
    from fcreplay.decision import signature as signature
    from fcreplay.errors import FcreplayError as FcreplayError
    from fcreplay.errors import InputError as InputError
    from fcreplay.finding import Finding as Finding
    from fcreplay.inputs.cases import Case as Case
    from fcreplay.inputs.cases import Expectation as Expectation
    from fcreplay.inputs.cases import ExpectedCall as ExpectedCall
    from fcreplay.inputs.cases import load_cases as load_cases
    from fcreplay.inputs.contract import Contract as Contract
    from fcreplay.inputs.contract import ToolSpec as ToolSpec
    from fcreplay.inputs.contract import load_contract as load_contract
    from fcreplay.judge.expectations import judge_expectation as judge_expectation
    from fcreplay.judge.expectations import validate_call as validate_call
    from fcreplay.judge.expectations import validate_decision as validate_decision
    from fcreplay.judge.repair import ArgumentClassification as ArgumentClassification
    from fcreplay.judge.repair import classify_arguments as classify_arguments

_EXPORTS: dict[str, str] = {
    "Capabilities": "adapters.capabilities",
    "StreamPath": "adapters.capabilities",
    "ClientAdapter": "adapters.protocol",
    "ReadBackAdapter": "adapters.protocol",
    "ServerAdapter": "adapters.protocol",
    "register_adapter": "adapters.registry",
    "Case": "inputs.cases",
    "ExpectedCall": "inputs.cases",
    "Expectation": "inputs.cases",
    "load_cases": "inputs.cases",
    "canonical_json": "canonical",
    "Contract": "inputs.contract",
    "ToolSpec": "inputs.contract",
    "load_contract": "inputs.contract",
    "Decision": "decision",
    "ProviderError": "decision",
    "ToolCall": "decision",
    "signature": "decision",
    "FcreplayError": "errors",
    "InputError": "errors",
    "Finding": "finding",
    "ArgumentClassification": "judge.repair",
    "classify_arguments": "judge.repair",
    "judge_expectation": "judge.expectations",
    "validate_call": "judge.expectations",
    "validate_decision": "judge.expectations",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fcreplay' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
