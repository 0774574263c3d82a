"""The Python API beside the CLI: the same operations, returning the result objects it renders.

    import fcreplay

    suite = fcreplay.load_suite("pyproject.toml")
    result = fcreplay.check_suite(suite)           # CheckResult, as `fcreplay check`
    if not result.ok:
        print(result.summary())
    diff = fcreplay.golden_diff(result.run)        # GoldenDiff, as `fcreplay golden diff`
    diff = fcreplay.run_diff(old_run, result.run)  # the same classes between two runs
    fcreplay.golden_update(result.run, suite, reason="accepted the new model")

(`check_suite`, `record_suite`, `replay_suite`: `fcreplay.check` and `fcreplay.record`
are modules of the package.) Errors are the CLI's: InputError for unusable files (the CLI's exit 2),
SecretLeakError for a recording that would hold a key; findings are results.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from fcreplay.check import DEFAULT_FAIL_ON, CheckResult, run_check
from fcreplay.engine import runner
from fcreplay.engine.runner import RecordMode, RunResult
from fcreplay.golden.compare import RunSide
from fcreplay.golden.diff import GoldenDiff, diff_run
from fcreplay.golden.rundiff import diff_runs, run_side
from fcreplay.golden.update import UpdateResult, update_golden
from fcreplay.inputs.config import SuiteConfig
from fcreplay.inputs.suite import Suite
from fcreplay.inputs.suite import load_suite as _load_suite
from fcreplay.record import AttemptRecord
from fcreplay.runlog import read_run_end, read_run_log
from fcreplay.runmarks import RunScope
from fcreplay.schemadiff.differ import SchemaDiffResult
from fcreplay.schemadiff.differ import schema_diff as _schema_diff

Run = RunResult | Sequence[AttemptRecord] | str | Path
"""A run: its result, its records, or the path of its run log."""


def load_suite(config: SuiteConfig | str | Path | None = None) -> Suite:
    """Load a suite from `pyproject.toml`'s [tool.fcreplay], an `fcreplay.toml`, or a config
    (default: found from the current folder, as the CLI does); InputError lists every problem."""
    return _load_suite(config)


def replay_suite(
    suite: Suite,
    *,
    targets: Sequence[str] = (),
    variants: Sequence[str] = (),
    case_ids: Sequence[str] = (),
    processes: int | None = None,
    runs_dir: Path | None = None,
) -> RunResult:
    """Replay the suite from its cassettes, offline (`fcreplay replay`); writes a run log."""
    options = runner.ReplayOptions(
        targets=tuple(targets),
        variants=tuple(variants),
        case_ids=tuple(case_ids),
        processes=processes,
        runs_dir=runs_dir,
    )
    return runner.replay(suite, options)


def record_suite(
    suite: Suite,
    *,
    record_mode: RecordMode = "all",
    targets: Sequence[str] = (),
    variants: Sequence[str] = (),
    case_ids: Sequence[str] = (),
    concurrency: int = 1,
    runs_dir: Path | None = None,
) -> RunResult:
    """Run the suite live and record its cassettes (`fcreplay record`); needs the keys."""
    options = runner.RecordOptions(
        targets=tuple(targets),
        variants=tuple(variants),
        case_ids=tuple(case_ids),
        concurrency=concurrency,
        runs_dir=runs_dir,
        record_mode=record_mode,
    )
    return runner.record(suite, options)


def check_suite(
    suite: Suite, *, fail_on: Sequence[str] = DEFAULT_FAIL_ON, processes: int | None = None
) -> CheckResult:
    """The CI check (`fcreplay check`): replay, schema diff, golden diff; `.ok` is the verdict."""
    return run_check(suite, fail_on=fail_on, processes=processes)


def schema_diff(
    suite: Suite, *, targets: Sequence[str] = (), allow: Iterable[str] = ()
) -> SchemaDiffResult:
    """The sent tool schemas of the suite's cassettes against its contract."""
    return _schema_diff(suite, targets=targets, allow=allow)


def run_records(run: Run) -> tuple[AttemptRecord, ...]:
    """The attempt records of a run given as a result, records, or a run log path."""
    if isinstance(run, RunResult):
        return run.records
    if isinstance(run, str | Path):
        return read_run_log(Path(run)).records
    return tuple(run)


def golden_diff(run: Run, golden: Suite | Path | str) -> GoldenDiff:
    """A run against the golden baselines (`fcreplay golden diff`); `golden` is the suite
    (its golden folder) or the folder itself."""
    return diff_run(run_records(run), _golden_dir(golden))


def run_diff(before: Run, after: Run, *, pairs: Sequence[tuple[str, str]] = ()) -> GoldenDiff:
    """Run `after` against the entries of run `before` (`fcreplay diff`): the golden diff's
    classes, by decisions only; `pairs` compares (target of before, target of after)."""
    (records_a, side_a, _), (records_b, side_b, scope) = (
        _run_side(name, run) for name, run in (("A", before), ("B", after))
    )
    return diff_runs(records_a, records_b, sides=(side_a, side_b), pairs=pairs, scope=scope)


def _run_side(name: str, run: Run) -> tuple[tuple[AttemptRecord, ...], RunSide, RunScope | None]:
    scope: RunScope | None
    if isinstance(run, RunResult):
        end = read_run_end(run.log_path) if run.log_path.is_file() else None
        path, records, scope = run.log_path, run.records, run.scope
    elif isinstance(run, str | Path):
        contents = read_run_log(Path(run))
        path, records, end = Path(run), contents.records, contents.end
        scope = end.scope if end is not None else None
    else:
        records, end, scope = tuple(run), None, None
        path = Path(records[0].run_id if records else "records")
    return records, run_side(name, str(path), path, records, end), scope


def golden_update(
    run: Run,
    golden: Suite | Path | str,
    *,
    reason: str,
    targets: Sequence[str] = (),
    case_ids: Sequence[str] = (),
    prune: bool = False,
) -> list[UpdateResult]:
    """Set golden entries from a run (`fcreplay golden update`); unchanged ones stay
    byte-identical. ValueError when `reason` is empty."""
    if not reason.strip():
        raise ValueError("golden_update needs a reason (it is kept in the provenance)")
    return update_golden(
        _golden_dir(golden),
        run_records(run),
        reason=reason,
        targets=targets,
        case_ids=case_ids,
        prune=prune,
    )


def _golden_dir(golden: Suite | Path | str) -> Path:
    return golden.config.golden if isinstance(golden, Suite) else Path(golden)
