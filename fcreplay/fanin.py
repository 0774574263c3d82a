"""The fan-in of a sharded check: shard run logs merged into one, and a run log's verdict.

`merge_shards` takes the run log of every shard of one `check --shard K/N` run and
writes the log an unsharded replay would have written (its lines in plan order,
stamped with the merged run's id); it refuses a missing shard, a shard given twice,
a log of other inputs than the suite's now, or one that does not hold exactly its
shard's attempts. `check_run_log` gives the verdict of such a log as `check` would:
the report and golden diff from its records, the schema diff from the cassettes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fcreplay.adapters.registry import get_adapter
from fcreplay.atomic import write_text_atomically
from fcreplay.cassettes.redaction import SecretGuard
from fcreplay.cassettes.store import load_cassette
from fcreplay.check import DEFAULT_FAIL_ON, CheckResult
from fcreplay.engine.fingerprint import run_fingerprint
from fcreplay.engine.plan import Unit
from fcreplay.engine.runner import RunOptions, RunResult, planned_units
from fcreplay.errors import InputError, Problem
from fcreplay.golden.diff import diff_run
from fcreplay.inputs.suite import Suite
from fcreplay.record import AttemptKey, AttemptRecord
from fcreplay.render.report import build_report
from fcreplay.runlog import RunLogContents, new_run_id, read_run_log, run_log_path
from fcreplay.runmarks import RunEnd, RunHeader, RunScope, run_end_line
from fcreplay.schemadiff.differ import SchemaDiffer


@dataclass(frozen=True)
class Merged:
    """The run log `merge_shards` wrote."""

    run_id: str
    path: Path
    attempts: int
    shards: int
    records: tuple[AttemptRecord, ...] = ()
    """Its records, in plan order (as reading it back would give them)."""
    scope: RunScope = field(default_factory=RunScope)


def merge_shards(suite: Suite, paths: Sequence[Path], *, out: Path | None = None) -> Merged:
    """Merge the run logs of every shard into one log of the whole run (see the module)."""
    logs = [(path, _finished(path)) for path in paths]
    problems: list[Problem] = []
    scopes = [(path, _end(path, contents).scope) for path, contents in logs]
    counts = {scope.shard.count for _, scope in scopes if scope.shard is not None}
    for path, scope in scopes:
        if scope.shard is None:
            problems.append(
                Problem(
                    path,
                    None,
                    "not a shard's run log (it names no shard): merge the logs "
                    "of `fcreplay check --shard K/N`",
                )
            )
    if len(counts) > 1:
        for path, scope in scopes:
            problems.append(
                Problem(
                    path,
                    None,
                    f"shard {scope.shard} of shards that disagree "
                    f"on their number ({', '.join(map(str, sorted(counts)))})",
                )
            )
    if problems:
        raise InputError(problems)
    (count,) = counts or {0}
    seen: dict[int, Path] = {}
    for path, scope in scopes:
        assert scope.shard is not None
        index = scope.shard.index
        if index in seen:
            problems.append(
                Problem(
                    path,
                    None,
                    f"shard {scope.shard} overlaps {seen[index]}, which is shard "
                    f"{scope.shard} too: give each shard's log once",
                )
            )
        seen.setdefault(index, path)
    absent = [f"{k}/{count}" for k in range(1, count + 1) if k not in seen]
    if absent:
        problems.append(
            Problem(
                suite.config.source,
                None,
                f"shard {', '.join(absent)} missing: merge the "
                f"run log of every one of the {count} shards (a shard job failed, or its log was "
                "not collected)",
            )
        )
    selections = {(s.targets, s.variants, s.case_ids) for _, s in scopes}
    if len(selections) > 1:
        problems.append(
            Problem(
                suite.config.source,
                None,
                "the shards ran different --target/--variant/--case selections",
            )
        )
    if problems:
        raise InputError(problems)
    targets, variants, case_ids = selections.pop()
    lines: dict[AttemptKey, bytes] = {}
    records: dict[AttemptKey, AttemptRecord] = {}
    for (path, contents), (_, scope) in zip(logs, scopes, strict=True):
        units = _planned(suite, scope)
        _verify(suite, path, contents, units)
        data = path.read_bytes()
        for record, (start, stop) in zip(contents.records, contents.spans, strict=True):
            lines[record.key] = data[start:stop]
            records[record.key] = record
    whole = RunScope(targets, variants, case_ids)
    units = _planned(suite, whole)
    run_id = new_run_id("replay")
    header = RunHeader(run_id, "replay", run_fingerprint(suite, units, _adapters(units)))
    order = _order(suite, units)
    body = [_stamped(lines[key], run_id) for key in order]
    end = RunEnd(run_id, "replay", True, len(body), None, whole)
    text = header.to_line() + b"".join(body).decode() + run_end_line(end)
    target = out or run_log_path(suite.config.runs, run_id)
    SecretGuard(suite.config.secret_values()).check(text, where=f"run log {target}")
    write_text_atomically(target, text)
    # The records as the merged log holds them: the shards' with the merged run's id.
    merged = tuple(replace(records[key], run_id=run_id) for key in order)
    return Merged(run_id, target, len(body), count, merged, whole)


def check_run_log(
    suite: Suite, path: Path, *, fail_on: Sequence[str] = DEFAULT_FAIL_ON
) -> CheckResult:
    """The verdict of a finished replay's run log (a merged one, say), as `check` gives it."""
    contents = _finished(path)
    end = _end(path, contents)
    units = _planned(suite, end.scope)
    _verify(suite, path, contents, units)
    position = {key: n for n, key in enumerate(_order(suite, units))}
    records = tuple(sorted(contents.records, key=lambda r: position[r.key]))
    assert contents.header is not None  # _verify saw it
    return verdict_of(
        suite, RunResult(contents.header.run_id, path, records, scope=end.scope), fail_on
    )


def check_merged(
    suite: Suite, merged: Merged, *, fail_on: Sequence[str] = DEFAULT_FAIL_ON
) -> CheckResult:
    """The verdict of the log `merge_shards` just wrote (its records not read again)."""
    run = RunResult(merged.run_id, merged.path, merged.records, scope=merged.scope)
    return verdict_of(suite, run, fail_on)


def verdict_of(suite: Suite, run: RunResult, fail_on: Sequence[str]) -> CheckResult:
    """`check`'s result for a run's records (in plan order), the schema diff read from the
    cassettes of its units."""
    units = _planned(suite, run.scope)
    run_id, records = run.run_id, run.records
    differ = SchemaDiffer(suite)
    cassettes = suite.config.cassettes
    for unit in units:
        cassette = unit.cassette_path(cassettes)
        if cassette.exists():
            differ.add(load_cassette(cassette, suite.config.limits), unit)
        else:
            differ.note_missing(cassette)
    return CheckResult(
        run=run,
        report=build_report(records, run_id, prices=dict(suite.config.prices)),
        schema=differ.result(),
        golden=diff_run(records, suite.config.golden, run_id=run_id, scope=run.scope),
        fail_on=tuple(fail_on),
    )


def _finished(path: Path) -> RunLogContents:
    contents = read_run_log(path)
    if contents.end is None or not contents.end.finished or contents.torn_line is not None:
        state = contents.end.state if contents.end is not None else "it has no run-end record"
        raise InputError.at(path, None, f"the run did not finish ({state}): run it again")
    if contents.header is None or contents.header.mode != "replay":
        raise InputError.at(
            path, 1, "not the log of a replay (`fcreplay check` or `fcreplay replay` writes one)"
        )
    return contents


def _end(path: Path, contents: RunLogContents) -> RunEnd:
    assert contents.end is not None  # _finished saw it
    return contents.end


def _planned(suite: Suite, scope: RunScope) -> list[Unit]:
    options = RunOptions(scope.targets, scope.variants, scope.case_ids, shard=scope.shard)
    return planned_units(suite, options)


def _order(suite: Suite, units: list[Unit]) -> list[AttemptKey]:
    repetitions = range(1, suite.config.repetitions + 1)
    return [(u.target.name, u.variant, u.case.id, n) for u in units for n in repetitions]


def _adapters(units: list[Unit]) -> dict[str, Any]:
    return {u.target.adapter: get_adapter(u.target.adapter) for u in units}


def _verify(suite: Suite, path: Path, contents: RunLogContents, units: list[Unit]) -> None:
    """The log was made from the suite's inputs now and holds exactly `units`' attempts."""
    assert contents.header is not None
    now = run_fingerprint(suite, units, _adapters(units))
    logged = contents.header.fingerprint
    changed = sorted(key for key in set(now) | set(logged) if now.get(key) != logged.get(key))
    if changed:
        raise InputError.at(
            path,
            1,
            f"made from other inputs than the suite's now ({', '.join(changed)} changed): "
            "run the check again",
        )
    wanted = set(_order(suite, units))
    held = [record.key for record in contents.records]
    extra = [key for key in held if key not in wanted]
    lacking = sorted(wanted - set(held))
    twice = len(held) != len(set(held))
    if extra or lacking or twice:
        what = (
            f"holds attempts its scope does not plan (first: {_label(extra[0])})"
            if extra
            else f"lacks {len(lacking)} planned attempts (first: {_label(lacking[0])})"
            if lacking
            else "holds an attempt twice"
        )
        raise InputError.at(path, None, f"{what}; it is not a whole run of the suite's plan")


def _label(key: AttemptKey) -> str:
    target, variant, case_id, attempt = key
    return f"{target}/{variant}/{case_id} #{attempt}"


def _stamped(line: bytes, run_id: str) -> bytes:
    """The record line with its run id replaced (its second key, by the log's layout)."""
    marker = b'"run_id":"'
    start = line.index(marker) + len(marker)
    end = line.index(b'"', start)
    return line[:start] + run_id.encode() + line[end:]
