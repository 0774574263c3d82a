"""Attempt records made by hand for tests, through the same `from_json` the log reader uses."""

from __future__ import annotations

from typing import Any

from fcreplay.record import AttemptRecord


def record_json(**fields: Any) -> dict[str, Any]:
    """A complete attempt record in its run-log form; `fields` override the defaults."""
    data: dict[str, Any] = {
        "schema_version": 1,
        "run_id": "r",
        "target": "t",
        "adapter": "openai_chat",
        "model": "m",
        "model_reported": None,
        "variant": "auto",
        "case_id": "c",
        "attempt": 1,
        "elapsed_ms": 0,
        "request_settings": {
            "tool_choice": "auto",
            "forced_tool": None,
            "parallel_tool_calls": None,
            "strict": False,
            "temperature": 0.0,
            "max_output_tokens": 100,
            "stream": False,
            "max_steps": 4,
        },
        "request_sha256": None,
        "adapter_version": "1",
        "prompt_version": None,
        "contract_hash": "h",
        "cases_version": None,
        "fcreplay_version": "0",
        "expect": {"kind": "text", "tools": []},
        "verdict": "pass",
        "signature": ["text", [], "[]"],
        "steps": [],
        "findings": [],
        "transport_error": None,
    }
    data.update(fields)
    return data


def make_record(**fields: Any) -> AttemptRecord:
    """An AttemptRecord with the defaults of `record_json`."""
    return AttemptRecord.from_json(record_json(**fields))
