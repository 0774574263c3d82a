"""Request-wide changes: the declared tools against the unit's list, and its tool settings.

`tool_extra`, `tool_missing` and `order_changed` compare the tools a request
declared with the list (and order) its variant sends, then each declared tool is
diffed keyword by keyword (`schemadiff.classes`); `tool_choice_mismatch` and
`parallel_mismatch` compare the request's tool choice and parallel policy with
the unit's settings for that step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fcreplay.adapters.protocol import ReadBackAdapter
from fcreplay.inputs.contract import Contract, ToolSpec
from fcreplay.neutral import ToolChoice
from fcreplay.schemadiff.classes import SchemaChange, tool_differences
from fcreplay.sources import pointer
from fcreplay.structdiff import MISSING


@dataclass(frozen=True)
class StepSettings:
    """What one step of one unit should send, as far as schema diff looks."""

    target: str
    adapter: str
    strict: bool
    tools: tuple[str, ...]
    choice: ToolChoice
    parallel: bool | None


def declaration_differences(
    contract: Contract,
    adapter: ReadBackAdapter,
    strict: bool,
    expected: Sequence[str],
    sent: Sequence[ToolSpec],
) -> list[SchemaChange]:
    """Differences between the tools a request declared and the ones it should have."""
    wanted = set(expected)
    changes: list[SchemaChange] = []
    declared: dict[str, ToolSpec] = {}
    for spec in sent:
        if spec.name in declared or spec.name not in wanted:
            changes.append(
                SchemaChange(spec.name, pointer(spec.name), "tool_extra", MISSING, spec.name)
            )
        else:
            declared[spec.name] = spec
    changes += [
        SchemaChange(name, pointer(name), "tool_missing", name, MISSING)
        for name in expected
        if name not in declared
    ]
    expected_order = [name for name in expected if name in declared]
    if list(declared) != expected_order:
        changes.append(SchemaChange(None, "", "order_changed", expected_order, list(declared)))
    for name, spec in declared.items():
        tool = contract.by_name[name]
        changes += tool_differences(tool, spec, adapter.wire_schema(tool.parameters, strict))
    return changes


def _choice_json(choice: ToolChoice) -> dict[str, Any]:
    return {"mode": choice.mode, **({"tool": choice.tool} if choice.tool else {})}


def setting_differences(
    expected: StepSettings,
    choice: ToolChoice,
    parallel: bool | None,
    *,
    knob: bool,
    carried: bool = True,
) -> list[SchemaChange]:
    """Tool choice and parallel policy against the unit's settings for that step.

    `knob`: whether the wire format can carry the parallel policy with the expected tool
    choice (`Capabilities.parallel_knob`). When it cannot, a request that leaves the
    policy out is no mismatch: `fcreplay lint` reports the limitation once instead.
    `carried`: whether the format can ask for the expected tool choice at all
    (`Capabilities.tool_choice_modes`); when it cannot, the choice is not compared.
    """
    changes = []
    if choice != expected.choice and carried:
        changes.append(
            SchemaChange(
                None,
                "",
                "tool_choice_mismatch",
                _choice_json(expected.choice),
                _choice_json(choice),
            )
        )
    unsent = parallel is None and not knob
    if parallel != expected.parallel and not unsent:
        changes.append(SchemaChange(None, "", "parallel_mismatch", expected.parallel, parallel))
    return changes
