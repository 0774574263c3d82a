"""fcreplay: record, replay and regression-test LLM function calling.

The public Python API is listed in `__all__`; names load on first use so that
`import fcreplay` (and `fcreplay --help`) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .canonical import canonical_json as canonical_json
    from .cases import Case as Case
    from .cases import Expectation as Expectation
    from .cases import ExpectedCall as ExpectedCall
    from .cases import load_cases as load_cases
    from .contract import Contract as Contract
    from .contract import ToolSpec as ToolSpec
    from .contract import load_contract as load_contract
    from .decision import Decision as Decision
    from .decision import ProviderError as ProviderError
    from .decision import ToolCall as ToolCall
    from .decision import signature as signature
    from .errors import FcreplayError as FcreplayError
    from .errors import InputError as InputError
    from .finding import Finding as Finding
    from .repair import ArgumentCheck as ArgumentCheck
    from .repair import check_arguments as check_arguments
    from .validator import check_expectation as check_expectation
    from .validator import validate_call as validate_call
    from .validator import validate_decision as validate_decision

_EXPORTS: dict[str, str] = {
    "Case": "cases",
    "ExpectedCall": "cases",
    "Expectation": "cases",
    "load_cases": "cases",
    "canonical_json": "canonical",
    "Contract": "contract",
    "ToolSpec": "contract",
    "load_contract": "contract",
    "Decision": "decision",
    "ProviderError": "decision",
    "ToolCall": "decision",
    "signature": "decision",
    "FcreplayError": "errors",
    "InputError": "errors",
    "Finding": "finding",
    "ArgumentCheck": "repair",
    "check_arguments": "repair",
    "check_expectation": "validator",
    "validate_call": "validator",
    "validate_decision": "validator",
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
