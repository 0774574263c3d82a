"""The application's tools: their declarations for each SDK, and the (fake) tracker behind them.

The declarations are the application's own adapter code: they must match the
canonical contract (`contracts/tools.json`), which `fcreplay.assert_tools` checks.
"""

from __future__ import annotations

import json
from typing import Any

SEVERITIES = ["blocker", "critical", "major", "minor"]

SCHEMAS: dict[str, dict[str, Any]] = {
    "create_bug": {
        "type": "object",
        "properties": {
            "title": {
                "type": "string",
                "minLength": 5,
                "description": "Short summary of the defect.",
            },
            "severity": {"type": "string", "enum": SEVERITIES},
        },
        "required": ["title", "severity"],
        "additionalProperties": False,
    },
    "get_test_case": {
        "type": "object",
        "properties": {"test_id": {"type": "string", "pattern": "^TC-[0-9]+$"}},
        "required": ["test_id"],
        "additionalProperties": False,
    },
}
DESCRIPTIONS = {
    "create_bug": "File a defect in the bug tracker. Call when the user described a defect "
    "and asked to record it.",
    "get_test_case": "Read one test case and its latest status. Call when the user asks "
    "about a test case by id.",
}


def anthropic_tools() -> list[dict[str, Any]]:
    """Tool declarations for the Anthropic Messages API."""
    return [
        {"name": name, "description": DESCRIPTIONS[name], "input_schema": schema}
        for name, schema in SCHEMAS.items()
    ]


def openai_tools() -> list[dict[str, Any]]:
    """Tool declarations for OpenAI Chat Completions."""
    return [
        {
            "type": "function",
            "function": {"name": name, "description": DESCRIPTIONS[name], "parameters": schema},
        }
        for name, schema in SCHEMAS.items()
    ]


class TrackerDown(Exception):
    """The tracker did not answer."""


TEST_CASES = {"TC-1": {"id": "TC-1", "title": "Login", "status": "passed"}}


def run_tool(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """Run a tool; a failure comes back as (message, True) for the model, never raised."""
    try:
        if name == "create_bug":
            return json.dumps({"id": "BUG-4213", "severity": arguments["severity"]}), False
        if name == "get_test_case":
            case = TEST_CASES.get(arguments["test_id"])
            if case is None:
                raise TrackerDown(f"test case {arguments['test_id']} not found")
            return json.dumps(case), False
        return f"unknown tool {name}", True
    except (TrackerDown, KeyError) as exc:
        return f"tracker error: {exc}", True
