"""Contract import: the tools of an MCP server or a provider request, as a canonical contract.

Accepted documents:

* MCP: a `tools/list` result `{"tools": [{"name", "description", "inputSchema", ...}]}`,
  the whole JSON-RPC response around it, or the bare list of tools;
* a provider's tools, read back by the adapter of that wire format (any registered
  adapter that reads requests back): a request body with `tools`, the bare `tools`
  array, or one tools entry (for formats that group declarations in an entry).

`effect` cannot be read from any of these (MCP's `readOnlyHint` is a hint a server
may get wrong), so every tool is `write` unless the caller names it read: guessing
`read` would hide unsafe calls. What did not convert is listed, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from fcreplay.adapters.protocol import ReadBackAdapter
from fcreplay.adapters.registry import adapters
from fcreplay.inputs.contract import TOOL_NAME, Effect, ToolSpec
from fcreplay.judge.schema import meta_schema_problems

MCP = "mcp"
AUTO = "auto"
_MCP_KEPT = frozenset({"name", "description", "inputSchema"})


@dataclass(frozen=True)
class Unconverted:
    """One declaration, or part of one, that is not in the written contract."""

    where: str
    """e.g. `tools[3]` or `tools[3].outputSchema`."""
    name: str | None
    reason: str


@dataclass(frozen=True)
class ImportedContract:
    """The tools converted, and everything that was not."""

    source_format: str
    tools: tuple[ToolSpec, ...]
    unconverted: tuple[Unconverted, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        """The contract file's content."""
        return [tool.to_json() for tool in self.tools]


def formats() -> list[str]:
    """Every format `import_contract` reads: mcp and each read-back adapter's name."""
    return [MCP, *(name for name, adapter in adapters() if isinstance(adapter, ReadBackAdapter))]


def import_contract(
    document: Any, *, source_format: str = AUTO, effect: Effect = "write", read: Iterable[str] = ()
) -> ImportedContract:
    """Convert a document (module doc); ValueError when no format reads any tool from it."""
    if source_format == AUTO:
        source_format = _detect(document)
    if source_format == MCP:
        found, lost = _mcp(document)
    else:
        found, lost = _wire(document, source_format)
    read_names = set(read)
    tools: list[ToolSpec] = []
    seen: set[str] = set()
    for where, spec in found:
        problem = _problem(spec, seen)
        if problem:
            lost.append(Unconverted(where, spec.name, problem))
            continue
        seen.add(spec.name)
        tools.append(replace(spec, effect="read" if spec.name in read_names else effect))
    unknown = sorted(read_names - seen)
    notes = [f"--read names {name!r}, which was not imported" for name in unknown]
    if source_format == MCP:
        notes += [
            f"the server hints that {name} is read-only (annotations.readOnlyHint); "
            f"pass --read {name} if it changes nothing"
            for name in _read_only_hints(document)
            if name in seen and name not in read_names
        ]
    if not tools:
        reasons = "; ".join(f"{u.where}: {u.reason}" for u in lost) or "no tools found"
        raise ValueError(f"no tool converted from the {source_format} document ({reasons})")
    return ImportedContract(source_format, tuple(tools), tuple(lost), tuple(notes))


def _detect(document: Any) -> str:
    if _mcp_tools(document) is not None:
        return MCP
    best, count = None, 0
    for name, adapter in adapters():
        if isinstance(adapter, ReadBackAdapter):
            found = sum(len(adapter.sent_tools(_body([entry]))) for entry in _entries(document))
            if found > count:
                best, count = name, found
    if best is None:
        raise ValueError(
            f"not a tool list this version reads: neither an MCP tools/list result nor the "
            f"tools of any of {', '.join(formats()[1:])}"
        )
    return best


def _mcp_tools(document: Any) -> list[Any] | None:
    if isinstance(document, dict) and isinstance(document.get("result"), dict):
        document = document["result"]
    if isinstance(document, dict):
        document = document.get("tools")
    if (
        isinstance(document, list)
        and document
        and all(isinstance(item, dict) and "inputSchema" in item for item in document)
    ):
        return document
    return None


def _read_only_hints(document: Any) -> list[str]:
    return [
        item["name"]
        for item in _mcp_tools(document) or []
        if isinstance(item.get("annotations"), dict)
        and item["annotations"].get("readOnlyHint") is True
        and isinstance(item.get("name"), str)
    ]


def _mcp(document: Any) -> tuple[list[tuple[str, ToolSpec]], list[Unconverted]]:
    items = _mcp_tools(document)
    if items is None:
        raise ValueError('not an MCP tools/list result: {"tools": [{"inputSchema": ...}]}')
    found: list[tuple[str, ToolSpec]] = []
    lost: list[Unconverted] = []
    for index, item in enumerate(items):
        where = f"tools[{index}]"
        name = item.get("name")
        schema = item.get("inputSchema")
        if not isinstance(name, str) or not isinstance(schema, dict):
            lost.append(Unconverted(where, None, "needs a string name and an inputSchema object"))
            continue
        for key in sorted(set(item) - _MCP_KEPT):
            lost.append(Unconverted(f"{where}.{key}", name, "not part of a canonical contract"))
        description = item.get("description")
        found.append(
            (where, ToolSpec(name, description if isinstance(description, str) else "", schema))
        )
    return found, lost


def _wire(
    document: Any, source_format: str
) -> tuple[list[tuple[str, ToolSpec]], list[Unconverted]]:
    adapter = dict(adapters()).get(source_format)
    if not isinstance(adapter, ReadBackAdapter):
        raise ValueError(f"unknown format {source_format!r} (known: {', '.join(formats())})")
    found: list[tuple[str, ToolSpec]] = []
    lost: list[Unconverted] = []
    for index, entry in enumerate(_entries(document)):
        where = f"tools[{index}]"
        specs = adapter.sent_tools(_body([entry]))
        if not specs:
            kind = entry.get("type") if isinstance(entry, dict) else None
            named = entry.get("name") if isinstance(entry, dict) else None
            what = f"type {kind!r}" if kind else "this entry"
            lost.append(
                Unconverted(
                    where,
                    named if isinstance(named, str) else None,
                    f"{what} is not a function declaration of {source_format} (a hosted or "
                    "built-in tool has no schema to convert)",
                )
            )
        found += [(where, spec) for spec in specs]
    return found, lost


def _entries(document: Any) -> list[Any]:
    if isinstance(document, dict) and isinstance(document.get("tools"), list):
        return list(document["tools"])
    if isinstance(document, list):
        return document
    return [document]


def _body(entries: list[Any]) -> dict[str, Any]:
    return {"tools": entries}


def _problem(spec: ToolSpec, seen: set[str]) -> str | None:
    if not TOOL_NAME.match(spec.name):
        return f"name {spec.name!r} must match {TOOL_NAME.pattern}, as every provider requires"
    if spec.name in seen:
        return f"a second tool named {spec.name!r}"
    if spec.parameters.get("type") != "object":
        return 'parameters must be a JSON Schema with "type": "object"'
    problems = meta_schema_problems(spec.parameters)
    if problems:
        at, message = problems[0]
        return f"parameters{at} is not valid JSON Schema 2020-12: {message}"
    return None
