"""Request drift in the suite's own terms: which prompt, tool or message changed, not which path.

The raw differences between a recorded body and today's are leaf paths of a wire
format. This reads them back through what fcreplay knows without naming any wire
field: the tools through the adapter's read-back (`sent_tools`), so a reordered tool
list is one "tool order" change with its moves and a tool's edit is labelled with the
tool's name; every other string by what it equals in the suite (the system prompt,
a case message).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcreplay.adapters.protocol import ClientAdapter, ReadBackAdapter
from fcreplay.engine.plan import Unit
from fcreplay.engine.players import Mismatch
from fcreplay.inputs.contract import ToolSpec
from fcreplay.inputs.suite import Suite
from fcreplay.sources import pointer
from fcreplay.structdiff import Difference, differences


def labelled_changes(
    mismatch: Mismatch, *, suite: Suite, unit: Unit, adapter: ClientAdapter
) -> tuple[Difference, ...]:
    """The drift's differences with labels; tool declarations compared tool by tool."""
    recorded, sent = mismatch.recorded_body, mismatch.sent_body
    changes = list(mismatch.changes)
    tools: list[Difference] = []
    if isinstance(adapter, ReadBackAdapter) and recorded is not None and sent is not None:
        before, after = adapter.sent_tools(recorded), adapter.sent_tools(sent)
        if before != after:
            tools = _tool_changes(before, after)
            inside = _tool_lists(recorded, before) | _tool_lists(sent, after)
            changes = [c for c in changes if not any(_under(c.path, p) for p in inside)]
    texts = _known_texts(suite, unit)
    return tuple(tools + [_label(change, texts) for change in changes])


def drift_summary(changes: Sequence[Difference], shown: int = 3) -> str:
    """What changed, in words: `system prompt, tool order and 2 more`."""
    names = list(dict.fromkeys(change.label or change.path or "/" for change in changes))
    text = ", ".join(names[:shown])
    return text + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _tool_changes(before: Sequence[ToolSpec], after: Sequence[ToolSpec]) -> list[Difference]:
    old = [tool.name for tool in before]
    new = [tool.name for tool in after]
    found: list[Difference] = []
    if sorted(old) == sorted(new) and old != new:
        found.append(Difference("(tools)", old, new, "tool order"))
    elif set(old) != set(new):
        found.append(Difference("(tools)", old, new, "tool list"))
    now = {tool.name: tool for tool in after}
    for tool in before:
        other = now.get(tool.name)
        if other is None:
            continue
        if tool.description != other.description:
            found.append(
                Difference(
                    f"(tool {tool.name})/description",
                    tool.description,
                    other.description,
                    f"tool description of {tool.name}",
                )
            )
        for change in differences(tool.parameters, other.parameters):
            found.append(
                Difference(
                    f"(tool {tool.name})/parameters{change.path}",
                    change.before,
                    change.after,
                    f"parameters of tool {tool.name}",
                )
            )
    return found


def _tool_lists(body: Any, tools: Sequence[ToolSpec]) -> set[str]:
    """Pointers of the lists in `body` that hold the declarations of `tools`, in order.

    A declaration is found by its tool's name among its own (or its child's) string
    values, so no wire field is named; a list only counts when every item matches.
    """
    names = [tool.name for tool in tools]
    found: set[str] = set()

    def visit(value: Any, path: tuple[Any, ...]) -> None:
        if isinstance(value, list):
            if (
                names
                and len(value) == len(names)
                and all(_names_itself(item, name) for item, name in zip(value, names, strict=True))
            ):
                found.add(pointer(*path))
            for index, item in enumerate(value):
                visit(item, (*path, index))
        elif isinstance(value, dict):
            for key, item in value.items():
                visit(item, (*path, key))

    visit(body, ())
    return found


def _names_itself(item: Any, name: str, depth: int = 2) -> bool:
    if not isinstance(item, dict):
        return False
    for value in item.values():
        if value == name:
            return True
        if depth > 1 and _names_itself(value, name, depth - 1):
            return True
    return False


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def _known_texts(suite: Suite, unit: Unit) -> dict[str, str]:
    texts: dict[str, str] = {}
    for message in unit.case.messages:
        texts[message.content] = f"{message.role} message"
    if suite.system_prompt:
        texts[suite.system_prompt] = "system prompt"
    return texts


def _label(change: Difference, texts: dict[str, str]) -> Difference:
    for value in (change.after, change.before):
        if isinstance(value, str) and value in texts:
            return Difference(change.path, change.before, change.after, texts[value])
    return change
