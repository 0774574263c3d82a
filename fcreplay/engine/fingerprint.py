"""What a run was made of, so a resumed run can prove it is still the same run.

The first line of every run log written by `record` or `replay` is a header with
this fingerprint: the contract, prompt, cases and tool results (by hash), the
request settings, the targets and their adapters' versions, and the mode. Resuming
compares the fingerprint of now with the one logged, and refuses on any change:
one run log must never hold attempts of two different suites.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.cassettes.redaction import scrub_url
from fcreplay.engine.plan import Unit
from fcreplay.errors import InputError, Problem
from fcreplay.inputs.suite import Suite
from fcreplay.runmarks import RunHeader


def run_fingerprint(
    suite: Suite, units: Sequence[Unit], adapters: Mapping[str, ClientAdapter]
) -> dict[str, Any]:
    """The fingerprint of a run over `units` (JSON-ready; compared key by key)."""
    config = suite.config
    targets = {unit.target.name: unit.target for unit in units}
    return {
        "contract": suite.contract.contract_hash,
        "prompt": _digest(suite.system_prompt),
        "prompt_version": config.prompt_version,
        "cases": _file_digest(config.cases),
        "cases_version": suite.cases_version,
        "tool_results": _file_digest(config.tool_results),
        "settings": {
            "temperature": config.temperature,
            "max_output_tokens": config.max_output_tokens,
            "repetitions": config.repetitions,
            "parallel_tool_calls": config.parallel_tool_calls,
            "max_steps": config.max_steps,
            "max_retries": config.max_retries,
        },
        "targets": {
            name: {
                "adapter": target.adapter,
                "adapter_version": adapters[target.adapter].VERSION,
                "model": target.model,
                "base_url": scrub_url(target.base_url) if target.base_url else None,
                "stream": target.stream,
                "strict": target.strict,
            }
            for name, target in sorted(targets.items())
        },
    }


def check_resumable(log: Path, header: RunHeader | None, mode: str, now: dict[str, Any]) -> None:
    """Raise an InputError naming every difference between the logged run and this one."""
    if header is None:
        raise InputError.at(
            log,
            1,
            "cannot resume: the run log has no run header (it was written by an older "
            "fcreplay or by another tool); start a new run without --resume",
        )
    problems = []
    if header.mode != mode:
        problems.append(
            Problem(log, 1, f"cannot resume a {header.mode} run as a {mode} run; start a new run")
        )
    for key in sorted(set(now) | set(header.fingerprint)):
        before, after = header.fingerprint.get(key), now.get(key)
        if before != after:
            problems.append(
                Problem(
                    log,
                    1,
                    f"cannot resume: {_what_changed(key, before, after)} since the run began; "
                    "restore it, or start a new run without --resume",
                )
            )
    if problems:
        raise InputError(problems)


def _what_changed(key: str, before: Any, after: Any) -> str:
    if isinstance(before, dict) and isinstance(after, dict):
        parts = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        return f"the {key} changed ({', '.join(parts)})"
    return f"the {key} changed (was {_short(before)}, now {_short(after)})"


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 24 else text[:12] + "…"


def _digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _file_digest(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None  # a file that went away since loading fails elsewhere, with its name
