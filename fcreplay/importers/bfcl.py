"""BFCL import: a fcreplay suite from the Berkeley Function Calling Leaderboard's single-turn data.

Each BFCL entry becomes a case: its question as `messages`, its functions as the case's
own `tools`, and its possible answers as a `tool_call` expectation under the `bfcl`
rules (irrelevance entries: `no_call`). Functions become contract tools
(`bfcl_schema`); the same name with another definition in another entry gets its own
tool (`name__2`), and `contracts/bfcl_names.json` keeps every tool's BFCL name. Calls
are judged, not executed: one tool-results rule answers every tool.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fcreplay.atomic import write_text_atomically
from fcreplay.canonical import canonical_json
from fcreplay.importers.bfcl_data import Entry, load_category
from fcreplay.importers.bfcl_schema import function_schema, safe_name
from fcreplay.inputs.cases import CASE_ID
from fcreplay.inputs.contract import ToolSpec
from fcreplay.simulator.server import base_urls

CONTRACT = "contracts/bfcl_tools.json"
NAMES = "contracts/bfcl_names.json"
CASES = "cases/bfcl.jsonl"
RESULTS = "cases/bfcl_results.json"
NOTICE = "NOTICE-BFCL.txt"
CONFIG = "fcreplay.toml"
SIMULATOR_URL = "http://127.0.0.1:8765"
"""Where `fcreplay simulate` listens by default; the written targets point there."""


@dataclass(frozen=True)
class BfclSuite:
    """What an import produced, ready to write."""

    categories: tuple[str, ...]
    tools: tuple[ToolSpec, ...]
    names: dict[str, str]
    """Contract tool name -> BFCL function name."""
    cases: tuple[dict[str, Any], ...]
    """Case objects, one line each of the cases file."""
    notes: tuple[str, ...]
    """Schema changes made so the answers fit, one per change."""
    skipped: tuple[str, ...]
    """Entries not imported, and why."""


def import_bfcl(
    data: Path,
    categories: Sequence[str],
    *,
    limit: int | None = None,
    effect: Literal["read", "write"] = "write",
) -> BfclSuite:
    """Read the categories from `data` and build the suite (InputError for bad data)."""
    builder = _Builder(effect)
    for category in dict.fromkeys(categories):
        for entry in load_category(data, category)[:limit]:
            builder.add(entry)
    return BfclSuite(
        tuple(dict.fromkeys(categories)),
        tuple(builder.tools),
        builder.names,
        tuple(builder.cases),
        tuple(builder.notes),
        tuple(builder.skipped),
    )


class _Builder:
    """Collects tools (deduplicated by definition) and cases entry by entry."""

    def __init__(self, effect: Literal["read", "write"]) -> None:
        self.effect = effect
        self.tools: list[ToolSpec] = []
        self.names: dict[str, str] = {}
        self.cases: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.skipped: list[str] = []
        self._by_definition: dict[str, str] = {}

    def add(self, entry: Entry) -> None:
        where = f"{entry.source}:{entry.line}: {entry.id}"
        messages, problem = _messages(entry)
        if problem or not CASE_ID.match(entry.id):
            self.skipped.append(f"{where}: {problem or 'the id is not a usable case id'}")
            return
        answers = _answers_by_function(entry)
        declared: dict[str, str] = {}
        for function in entry.functions:
            name = function.get("name")
            if not isinstance(name, str) or not name:
                self.skipped.append(f"{where}: a function without a name")
                return
            declared[name] = self._tool(function, answers.get(name, {}), entry.id)
        case: dict[str, Any] = {"id": entry.id}
        if len(messages) == 1 and messages[0]["role"] == "user":
            case["user"] = messages[0]["content"]
        else:
            case["messages"] = messages
        if entry.answers is None:
            case["expect"] = {"kind": "no_call"}
        else:
            calls = []
            for item in entry.answers:
                (name, arguments), *more = item.items()
                if more or name not in declared or not isinstance(arguments, dict):
                    self.skipped.append(f"{where}: an answer names no function of the entry")
                    return
                calls.append({"tool": declared[name], "arguments": arguments})
            case["expect"] = {"kind": "tool_call", "rules": "bfcl", "calls": calls}
        case["tools"] = list(dict.fromkeys(declared.values()))
        case["tags"] = ["bfcl", entry.category]
        self.cases.append(case)

    def _tool(self, function: dict[str, Any], answers: dict[str, list[Any]], entry: str) -> str:
        name = function["name"]
        description = function.get("description")
        description = description if isinstance(description, str) else ""
        schema, notes = function_schema(function.get("parameters"), answers, f"{entry}:{name}")
        key = canonical_json([name, description, schema])
        known = self._by_definition.get(key)
        if known is not None:
            return known
        safe = base = safe_name(name)
        number = 1
        while safe in self.names:
            number += 1
            suffix = f"__{number}"
            safe = base[: 64 - len(suffix)] + suffix
        self._by_definition[key] = safe
        self.names[safe] = name
        self.notes += notes
        self.tools.append(ToolSpec(safe, description, schema, self.effect))
        return safe


def _messages(entry: Entry) -> tuple[list[dict[str, str]], str | None]:
    messages = []
    for item in entry.messages:
        role, content = item.get("role"), item.get("content")
        if role not in ("system", "user", "assistant") or not isinstance(content, str):
            return [], f"a message of role {role!r} or with content that is not text"
        messages.append({"role": str(role), "content": content})
    roles = [m["role"] for m in messages]
    if not roles or roles[-1] != "user":
        return [], "the question does not end with a user message"
    first_other = next((i for i, r in enumerate(roles) if r != "system"), len(roles))
    if "system" in roles[first_other:]:
        return [], "a system message after the conversation started"
    return messages, None


def _answers_by_function(entry: Entry) -> dict[str, dict[str, list[Any]]]:
    """Every possible answer per function and parameter, over all of the entry's calls."""
    merged: dict[str, dict[str, list[Any]]] = {}
    for item in entry.answers or ():
        for name, arguments in item.items():
            if isinstance(arguments, dict):
                into = merged.setdefault(name, {})
                for parameter, possible in arguments.items():
                    if isinstance(possible, list):
                        into.setdefault(parameter, []).extend(possible)
    return merged


def write_suite(suite: BfclSuite, folder: Path) -> list[Path]:
    """Write the suite's files under `folder`; return them in writing order."""
    files = {
        CONTRACT: json.dumps([t.to_json() for t in suite.tools], ensure_ascii=False, indent=1),
        NAMES: json.dumps(
            {"note": "contract tool name -> BFCL function name", "tools": suite.names},
            ensure_ascii=False,
            indent=1,
        ),
        CASES: "\n".join(json.dumps(c, ensure_ascii=False) for c in suite.cases),
        RESULTS: json.dumps(
            {
                "note": "BFCL single-turn cases are judged on the call, not on what a tool "
                "returns: one rule answers every tool.",
                "rules": [{"tool": "*", "result": {"note": "not executed (BFCL import)"}}],
            },
            indent=1,
        ),
        NOTICE: _NOTICE,
        CONFIG: _config(suite),
    }
    written = []
    for relative, text in files.items():
        path = folder / relative
        write_text_atomically(path, text + "\n")
        written.append(path)
    return written


def _config(suite: BfclSuite) -> str:
    kinds = "-".join(suite.categories)
    parallel = any("parallel" in c for c in suite.categories)
    targets = "\n".join(
        f'[[targets]]\nname = "sim-{adapter.replace("_", "-")}"\nadapter = "{adapter}"\n'
        f'model = "fcreplay-sim-expected"\nbase_url = "{url}"\n'
        for adapter, url in base_urls(SIMULATOR_URL).items()
    )
    return (
        "# A suite imported from BFCL v4 (`fcreplay import bfcl`); see NOTICE-BFCL.txt.\n"
        "# Keys: docs/config.md. Calls are judged under BFCL's rules (docs/cases.md).\n"
        f'contract = "{CONTRACT}"\n'
        f'cases = "{CASES}"\n'
        f'cases_version = "bfcl-v4-{kinds}"\n'
        'prompt_version = "bfcl-v4-no-system-prompt"\n'
        f'tool_results = "{RESULTS}"\n'
        "repetitions = 1\n"
        "max_steps = 2\n"
        'variants = ["auto"]\n'
        + ("parallel_tool_calls = true\n" if parallel else "")
        + "\n# Simulator targets (`fcreplay simulate --from-cases`); for a real model set its\n"
        "# adapter, model id and api_key_env (the NAME of the variable holding the key).\n"
        + targets
    )


_NOTICE = """\
The cases and tool declarations of this suite are derived from the Berkeley Function
Calling Leaderboard (BFCL) v4 data, as shipped in the bfcl-eval package, which is
licensed under the Apache License, Version 2.0
(https://www.apache.org/licenses/LICENSE-2.0). They were converted by
`fcreplay import bfcl`: function names made safe for providers (contracts/bfcl_names.json
keeps the originals), BFCL types mapped to JSON Schema, and possible answers written as
expectations under the bfcl rules. Categories imported are listed in fcreplay.toml."""
