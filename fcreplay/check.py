"""The CI check: replay the suite, diff the schemas, compare with the goldens, apply fail-on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fcreplay.collector as collector
from fcreplay.engine.progress import Progress
from fcreplay.engine.runner import ReplayOptions, RunResult, replay
from fcreplay.golden.diff import GoldenDiff, diff_run
from fcreplay.inputs.suite import Suite
from fcreplay.record import AttemptRecord
from fcreplay.render.report import build_report
from fcreplay.schemadiff.differ import SchemaDiffer, SchemaDiffResult
from fcreplay.shards import Shard
from fcreplay.verdict import failures, verdict

REASONS = {
    "stale": "a golden entry whose recording no longer matches what the suite sends",
    "regression": "a golden entry that passed now fails",
    "drift": "request drift or a missing cassette",
    "schema": "a blocking schema-diff entry",
    "missing": "a golden entry the run produced no attempt for",
    "new": "a case × variant without golden entry",
    "unsafe": "any unsafe_call finding in the run",
    "flaky": "a golden entry whose signature distribution moved",
    "changed": "a golden entry whose decision changed with the same verdict",
}
"""Every reason `--fail-on` accepts, and what it counts."""

DEFAULT_FAIL_ON = ("stale", "regression", "drift", "schema", "missing", "new")
"""Stale fails by default: a recording that no longer matches tests nothing of today's
code, so a green check would claim what it did not check."""


def parse_fail_on(text: str) -> tuple[str, ...]:
    """Split a comma-separated list of reasons; ValueError names an unknown one."""
    reasons = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    for reason in reasons:
        if reason not in REASONS:
            raise ValueError(f"unknown reason {reason!r} (known: {', '.join(REASONS)})")
    return reasons


@dataclass(frozen=True)
class Counted:
    """What a cached check knows of its records without holding them all."""

    attempts: int
    problems: tuple[AttemptRecord, ...]
    unsafe: int
    reused: int
    """Units whose records came from the cache."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckResult:
    """Everything the check found, and whether it passes under `fail_on`."""

    run: RunResult
    report: dict[str, Any]
    schema: SchemaDiffResult
    golden: GoldenDiff
    fail_on: tuple[str, ...]
    counted: Counted | None = None
    """Set by a cached check: `run.records` then holds only the attempts replayed now."""

    @property
    def attempts(self) -> int:
        """Attempts in the run (replayed now or taken from the cache)."""
        return self.counted.attempts if self.counted else len(self.run.records)

    @property
    def problems(self) -> Sequence[AttemptRecord]:
        """Attempts that could not be replayed faithfully: drift or a missing recording."""
        return self.counted.problems if self.counted else self.run.problems

    @property
    def log_path(self) -> Path:
        """The run log."""
        return self.run.log_path

    def counts(self) -> dict[str, int]:
        """How many of each reason the run shows, whether or not it fails on it."""
        golden = self.golden.counts()
        unsafe = (
            self.counted.unsafe
            if self.counted
            else sum(any(f.code == "unsafe_call" for f in r.findings) for r in self.run.records)
        )
        return {
            "stale": golden["stale"],
            "regression": golden["regression"],
            "drift": len(self.problems),
            "schema": len(self.schema.blocking),
            "missing": golden["missing"],
            "new": golden["new"],
            "unsafe": unsafe,
            "flaky": golden["flaky"],
            "changed": golden["changed"],
        }

    @property
    def failures(self) -> dict[str, int]:
        """The fail-on reasons with a non-zero count."""
        return failures(self.counts(), self.fail_on)

    @property
    def ok(self) -> bool:
        """Whether the check passes."""
        return not self.failures

    def headline(self) -> str | None:
        """The first line when recordings are stale: how many, why, and the command."""
        staleness = self.golden.staleness
        return staleness.headline() if staleness else None

    def summary(self) -> str:
        """The one closing line: verdict, what failed, what was seen, what to run next."""
        opening = verdict(self.failures)
        counts = self.counts()
        return (
            f"{opening}: {self.attempts} attempts replayed, {counts['drift']} drift, "
            f"{counts['schema']} blocking schema differences, golden {self.golden.summary()}; "
            "run `fcreplay golden diff --format markdown` for details"
        )


def run_check(
    suite: Suite,
    *,
    fail_on: Sequence[str] = DEFAULT_FAIL_ON,
    progress: Progress | None = None,
    processes: int | None = None,
    cache: bool | None = None,
    shard: Shard | None = None,
) -> CheckResult:
    """Replay every unit (writing a run log), diff schemas and goldens, apply `fail_on`.

    With `cache` (the command line's default), units unchanged since a check that
    wrote the suite's cache are not replayed (`fcreplay.cache`); False: every unit is
    replayed and the cache written afresh; None: no cache at all. With `shard`, only
    that shard's units (the goldens compared are theirs).
    """
    with collector.paused():
        return _check(suite, tuple(fail_on), progress, processes, cache, shard)


def _check(
    suite: Suite,
    fail_on: tuple[str, ...],
    progress: Progress | None,
    processes: int | None,
    cache: bool | None,
    shard: Shard | None,
) -> CheckResult:
    if cache is not None:
        from fcreplay.cache.checking import cached_check

        parts = cached_check(suite, read=cache, processes=processes, progress=progress, shard=shard)
        counted = Counted(parts.attempts, parts.problems, parts.unsafe, parts.reused, parts.notes)
        return CheckResult(parts.run, parts.report, parts.schema, parts.golden, fail_on, counted)
    # Schema diff looks at the cassettes as the replay reads them: each file is read once.
    differ = SchemaDiffer(suite)
    options = ReplayOptions(processes=processes, observer=differ, shard=shard)
    run = replay(suite, options, progress=progress)
    return CheckResult(
        run=run,
        report=build_report(run.records, run.run_id, prices=dict(suite.config.prices)),
        schema=differ.result(),
        golden=diff_run(run.records, suite.config.golden, run_id=run.run_id, scope=run.scope),
        fail_on=fail_on,
    )
