"""Cold, warm and one-changed-cassette checks of one suite, and `check --shard K/N` + `merge`.

Everything runs in a copy of the suite (`common.link_tree`: cassettes hard-linked,
a changed cassette replaced, never written in place) so the cached suite and its
cache stay as they were. Each check is a child process (`measure.py`); its stdout
(progress lines go to stderr) is compared with run ids masked, and its run log
record by record without the fields that differ by design (`run_id`, `elapsed_ms`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import (
    CONFIG,
    fcreplay,
    help_text,
    link_tree,
    log,
    masked,
    run_child,
    run_log_path,
    run_log_records,
)

SHARDS = 4


@dataclass
class CheckRun:
    """One `fcreplay check` of the copy: time, exit code, masked stdout, run-log digests."""

    seconds: float
    exit_code: int
    stdout: str
    records: list[str] = field(default_factory=list)
    """sha256 of each run-log line without its volatile fields, in file order."""
    log: Path | None = None

    def figures(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "exit_code": self.exit_code,
            "records": len(self.records),
            "summary": self.stdout.strip().splitlines()[-1] if self.stdout.strip() else "",
        }


def run_check(tree: Path, scratch: Path, flags: list[str], *, keep_log: bool = False) -> CheckRun:
    """`fcreplay check FLAGS` in `tree`; the run log is read, then deleted unless `keep_log`."""
    output, errors = scratch / "incremental-out.txt", scratch / "incremental-err.txt"
    measured = run_child(fcreplay("check", *CONFIG, *flags), cwd=tree, output=output, errors=errors)
    stdout = output.read_text(encoding="utf-8", errors="replace")
    path = run_log_path(stdout, tree)
    records = []
    if path is not None and path.is_file():
        records = [_digest(record) for record in run_log_records(path)]
        if not keep_log:
            path.unlink()
    return CheckRun(measured.seconds, measured.exit_code, masked(stdout), records, path)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compare(first: CheckRun, second: CheckRun) -> dict[str, Any]:
    """Whether two checks said the same: stdout (run ids masked), exit code, run log."""
    differing = sum(a != b for a, b in zip(first.records, second.records, strict=False))
    differing += abs(len(first.records) - len(second.records))
    same_log = bool(first.records) and first.records == second.records
    return {
        "stdout_identical": first.stdout == second.stdout,
        "exit_code_identical": first.exit_code == second.exit_code,
        "run_log_identical": same_log,
        "run_log_same_records_any_order": sorted(first.records) == sorted(second.records),
        "run_log_records_differing": differing,
        "identical": first.stdout == second.stdout
        and first.exit_code == second.exit_code
        and same_log,
    }


def incremental(folder: Path, scratch: Path, features: dict[str, bool]) -> dict[str, Any]:
    """Cold, warm (nothing changed) and warm-after-one-change checks of a copy of `folder`,
    each warm output compared with a cold check of the same tree; then shards + merge."""
    tree = scratch / f"tree-{folder.name}"
    shutil.rmtree(tree, ignore_errors=True)
    # Without the harness's own folders, the run logs, and any check cache a run of the
    # suite left (`.fcreplay/`): the copy starts cold.
    link_tree(folder, tree, skip=("vcrpy", "sdk_anchor", "runs", ".fcreplay"))
    cache = features["no_cache"]
    cold_flags = ["--no-cache"] if cache else []
    result: dict[str, Any] = {"cache_available": cache, "size": folder.name}
    log(f"incremental {folder.name}: cold check ...")
    cold = run_check(tree, scratch, cold_flags, keep_log=True)
    result["cold"] = cold.figures()
    result["shard"] = shard_and_merge(tree, scratch, cold, features)
    if cold.log is not None:
        cold.log.unlink(missing_ok=True)
    if cache:
        log(f"incremental {folder.name}: filling the cache ...")
        result["prime"] = run_check(tree, scratch, []).figures()
    log(f"incremental {folder.name}: warm check, nothing changed ...")
    warm = run_check(tree, scratch, [])
    result["warm"] = warm.figures() | compare(cold, warm)
    changed = change_one_cassette(tree / "cassettes")
    result["changed_cassette"] = changed
    if changed is None:
        result["warm_changed"] = {"note": "no cassette with a call to change"}
        return result
    log(f"incremental {folder.name}: warm check after changing {changed['cassette']} ...")
    warm_changed = run_check(tree, scratch, [])
    log(f"incremental {folder.name}: cold check of the changed tree ...")
    cold_changed = run_check(tree, scratch, cold_flags)
    result["warm_changed"] = warm_changed.figures() | compare(cold_changed, warm_changed)
    result["cold_changed"] = cold_changed.figures()
    # The change must show: otherwise "identical" would prove nothing about the cache.
    result["change_visible"] = cold_changed.stdout != cold.stdout or (
        cold_changed.records != cold.records
    )
    shutil.rmtree(tree, ignore_errors=True)
    return result


def change_one_cassette(cassettes: Path) -> dict[str, Any] | None:
    """Change one recorded decision: the arguments of the last call in the last answer of
    the first (sorted) cassette that has one in a non-streamed answer. The cassette stays
    a valid recording (the request still matches; the model simply decided otherwise)."""
    for path in sorted(cassettes.rglob("*.json")):
        document = json.loads(path.read_bytes())
        interactions = document.get("interactions") or []
        if not interactions:
            continue
        response = interactions[-1].get("response", {})
        body = response.get("parsed_body")
        holder = _last_call_arguments(body)
        if holder is None:
            continue
        owner, key, before = holder
        after = _changed(before)
        if after is None:
            continue
        owner[key] = after
        temporary = path.with_name(path.name + ".bench-tmp")
        temporary.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", "utf-8")
        os.replace(temporary, path)  # a new file: the hard link to the cached suite is broken
        relative = str(path.relative_to(cassettes))
        return {"cassette": relative, "before": before, "after": after}
    return None


def _last_call_arguments(value: Any) -> tuple[dict[str, Any], str, Any] | None:
    """(dict, key, arguments) of the last call in a response body, whatever its wire format:
    OpenAI's `arguments` text, Anthropic's `input`, Gemini's `args`."""
    found = None
    if isinstance(value, dict):
        for key, item in value.items():
            as_text = key == "arguments" and isinstance(item, str) and item.startswith("{")
            as_object = key in ("input", "args") and isinstance(item, dict) and bool(item)
            if as_text or as_object:
                found = (value, key, item)
            else:
                found = _last_call_arguments(item) or found
    elif isinstance(value, list):
        for item in value:
            found = _last_call_arguments(item) or found
    return found


def _changed(arguments: Any) -> Any:
    """The same arguments with their first string or number value changed."""
    parsed = arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(parsed, dict):
        return None
    for name, value in parsed.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            parsed = {**parsed, name: value + 1}
            break
        if isinstance(value, str):
            parsed = {**parsed, name: value + "-changed"}
            break
    else:
        return None
    return json.dumps(parsed, ensure_ascii=False) if isinstance(arguments, str) else parsed


# --- shards ---------------------------------------------------------------------------------


def shard_and_merge(
    tree: Path, scratch: Path, unsharded: CheckRun, features: dict[str, bool]
) -> dict[str, Any]:
    """`check --shard K/4` for every K, `fcreplay merge` of their run logs, compared with the
    unsharded check: verdict (exit code), stdout, run log, and `golden diff` of each log.

    The verdict of the merged log is `fcreplay check --from-run MERGED` when the CLI has
    that option, else what `merge` itself prints and exits with.
    """
    if not (features["shard"] and features["merge"]):
        return {"available": False}
    cold_flags = ["--no-cache"] if features["no_cache"] else []
    shards = []
    for k in range(1, SHARDS + 1):
        log(f"incremental {tree.name}: check --shard {k}/{SHARDS} ...")
        flags = [*cold_flags, "--shard", f"{k}/{SHARDS}"]
        shards.append(run_check(tree, scratch, flags, keep_log=True))
    logs = [str(s.log) for s in shards if s.log is not None]
    merge_help = help_text("merge")
    merged_path = tree / "runs" / "merged-shards.jsonl"
    command = ["merge", *logs]
    out = next((flag for flag in ("--output", "--out") if flag in merge_help), None)
    if out is not None:
        command += [out, str(merged_path)]
    if "--config" in merge_help:
        command += list(CONFIG)
    done = subprocess.run(fcreplay(*command), cwd=tree, capture_output=True, text=True)
    named = run_log_path(done.stdout + done.stderr, tree)
    if not merged_path.is_file() and named is not None:
        merged_path = named
    result: dict[str, Any] = {
        "available": True,
        "command": masked("fcreplay " + " ".join(re.sub(r".*/runs/", "runs/", a) for a in command)),
        "shard_seconds": [s.seconds for s in shards],
        "shard_exit_codes": [s.exit_code for s in shards],
        "merge_exit_code": done.returncode,
    }
    if not merged_path.is_file():
        result["note"] = "merge wrote no run log: " + (done.stdout + done.stderr)[-1500:]
        result["identical"] = False
        return result
    records = [_digest(r) for r in run_log_records(merged_path)]
    if "--from-run" in help_text("check"):
        verdict = run_check(tree, scratch, ["--from-run", str(merged_path)], keep_log=True)
        result["verdict_command"] = "fcreplay check --from-run MERGED"
    else:
        verdict = CheckRun(0.0, done.returncode, masked(done.stdout))
        result["verdict_command"] = "fcreplay merge"
    merged = CheckRun(0.0, verdict.exit_code, verdict.stdout, records, merged_path)
    same = compare(unsharded, merged)
    golden = [_golden_diff(tree, path) for path in (unsharded.log, merged_path)]
    result |= same
    # The first line names the run and its log ("replayed run ... (runs/....jsonl)"): a
    # merged verdict may word it otherwise; the report after it must be the same.
    result["stdout_identical_after_first_line"] = _body(unsharded.stdout) == _body(merged.stdout)
    result["golden_diff_identical"] = golden[0] == golden[1]
    result["identical"] = (
        same["exit_code_identical"]
        and same["run_log_identical"]
        and result["stdout_identical_after_first_line"]
        and result["golden_diff_identical"]
    )
    if not result["stdout_identical_after_first_line"]:
        result["stdout_unsharded"] = unsharded.stdout[-2000:]
        result["stdout_merged"] = merged.stdout[-2000:]
    for path in [*logs, str(merged_path)]:
        Path(path).unlink(missing_ok=True)
    return result


def _body(stdout: str) -> str:
    lines = stdout.splitlines()
    return "\n".join(lines[1:] if lines and lines[0].rstrip().endswith(".jsonl)") else lines)


def _golden_diff(tree: Path, run_log: Path | None) -> str:
    if run_log is None:
        return ""
    done = subprocess.run(
        fcreplay("golden", "diff", "--run", str(run_log), *CONFIG),
        cwd=tree,
        capture_output=True,
        text=True,
    )
    return f"{done.returncode}\n{masked(done.stdout)}"
