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
    from fcreplay.api import check_suite as check_suite
    from fcreplay.api import golden_diff as golden_diff
    from fcreplay.api import golden_update as golden_update
    from fcreplay.api import load_suite as load_suite
    from fcreplay.api import record_suite as record_suite
    from fcreplay.api import replay_suite as replay_suite
    from fcreplay.api import run_diff as run_diff
    from fcreplay.api import run_records as run_records
    from fcreplay.api import schema_diff as schema_diff
    from fcreplay.canonical import canonical_json as canonical_json
    from fcreplay.check import CheckResult as CheckResult
    from fcreplay.clients.bridge import NoRecordedAnswer as NoRecordedAnswer
    from fcreplay.decision import Decision as Decision
    from fcreplay.decision import ProviderError as ProviderError
    from fcreplay.decision import ToolCall as ToolCall
    from fcreplay.decision import signature as signature
    from fcreplay.engine.runner import RunResult as RunResult
    from fcreplay.errors import FcreplayError as FcreplayError
    from fcreplay.errors import InputError as InputError
    from fcreplay.finding import Finding as Finding
    from fcreplay.golden.diff import GoldenDiff as GoldenDiff
    from fcreplay.inputs.cases import Case as Case
    from fcreplay.inputs.cases import Expectation as Expectation
    from fcreplay.inputs.cases import ExpectedCall as ExpectedCall
    from fcreplay.inputs.cases import load_cases as load_cases
    from fcreplay.inputs.cases import parse_expectation as parse_expectation
    from fcreplay.inputs.contract import Contract as Contract
    from fcreplay.inputs.contract import ToolSpec as ToolSpec
    from fcreplay.inputs.contract import load_contract as load_contract
    from fcreplay.inputs.suite import Suite as Suite
    from fcreplay.judge.expectations import judge_expectation as judge_expectation
    from fcreplay.judge.expectations import validate_call as validate_call
    from fcreplay.judge.expectations import validate_decision as validate_decision
    from fcreplay.judge.repair import ArgumentClassification as ArgumentClassification
    from fcreplay.judge.repair import classify_arguments as classify_arguments
    from fcreplay.plugin.fixture import Fcreplay as Fcreplay
    from fcreplay.record import AttemptRecord as AttemptRecord
    from fcreplay.schemadiff.differ import SchemaDiffResult as SchemaDiffResult
    from fcreplay.traffic.player import TrafficPlayer as TrafficPlayer

_EXPORTS: dict[str, str] = {
    "check_suite": "api",
    "golden_diff": "api",
    "golden_update": "api",
    "load_suite": "api",
    "record_suite": "api",
    "replay_suite": "api",
    "run_diff": "api",
    "run_records": "api",
    "schema_diff": "api",
    "CheckResult": "check",
    "NoRecordedAnswer": "clients.bridge",
    "RunResult": "engine.runner",
    "GoldenDiff": "golden.diff",
    "parse_expectation": "inputs.cases",
    "Suite": "inputs.suite",
    "Fcreplay": "plugin.fixture",
    "AttemptRecord": "record",
    "SchemaDiffResult": "schemadiff.differ",
    "TrafficPlayer": "traffic.player",
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
