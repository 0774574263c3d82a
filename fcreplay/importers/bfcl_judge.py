"""fcreplay's verdict on a BFCL-style model output for an imported case.

BFCL's checker takes a decoded output `[{"function_name": {"param": value}}, ...]`.
`judge_output` reads the same shape, maps each function name to the case's contract
tool (the BFCL name, or BFCL's own dots-to-underscores form of it, as function-calling
models return it), and judges it the way a run judges a first turn: findings, empty
when the call passes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fcreplay.decision import Decision, ToolCall
from fcreplay.finding import Finding
from fcreplay.inputs.cases import Case
from fcreplay.inputs.contract import Contract
from fcreplay.judge.expectations import judge_expectation
from fcreplay.sources import load_json


def load_names(path: str | Path) -> dict[str, str]:
    """The contract tool -> BFCL name mapping an import wrote (contracts/bfcl_names.json)."""
    document, _ = load_json(Path(path))
    tools = document.get("tools") if isinstance(document, dict) else None
    return {str(k): str(v) for k, v in tools.items()} if isinstance(tools, dict) else {}


def tool_for(case: Case, names: Mapping[str, str], called: str) -> str:
    """The case's contract tool a BFCL-named call means (unchanged when none does)."""
    for tool in case.tools or ():
        original = names.get(tool, tool)
        if called in (tool, original, original.replace(".", "_")):
            return tool
    return called


def output_decision(
    case: Case, names: Mapping[str, str], output: Sequence[Mapping[str, Any]]
) -> Decision:
    """The Decision a run would have parsed from this output."""
    calls = []
    for index, item in enumerate(output):
        for name, arguments in item.items():
            calls.append(
                ToolCall(
                    f"call_{index}",
                    tool_for(case, names, name),
                    dict(arguments) if isinstance(arguments, Mapping) else None,
                    json.dumps(arguments, ensure_ascii=False),
                )
            )
    if not calls:
        return Decision("text", text="(no call)")
    return Decision("tool_call", calls=tuple(calls))


def judge_output(
    case: Case, contract: Contract, names: Mapping[str, str], output: Sequence[Mapping[str, Any]]
) -> list[Finding]:
    """Findings of an output against the case; an empty list is a pass."""
    decision = output_decision(case, names, output)
    return judge_expectation(decision, case.expect, contract.restricted(case.tools))
