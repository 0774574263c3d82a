"""The CI check of a cassette set recorded by any client (`fcreplay check --cassette-dir`).

Every cassette under the folder is read (any cassette `fcreplay inspect` reads);
each model exchange in it is judged as `fcreplay proxy` judges it while
recording: its decision, its calls against the contract (`judge.free_calls`), the
tools its request declared against the contract (`traffic.judging.tool_drifts`,
the schema-diff classes), and its tool-loop history (`traffic.judging
.history_problems`). With a golden folder, the decisions are also compared with
the golden baselines (`golden diff` classes). The records go to a run log, so
`fcreplay report`, `golden diff --run` and `golden update --run` read them.

Reasons (`--fail-on`): `schema` (a blocking schema-diff difference), `history` (a
broken tool-loop rule), `failed` (a call that breaks its tool's schema), `error`
(a provider error answer), and the golden classes `regression`, `fix`,
`changed`, `flaky`, `new`, `missing`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fcreplay.cassettes.inspection import expand_paths
from fcreplay.cassettes.store import load_cassette
from fcreplay.errors import InputError
from fcreplay.golden.diff import GoldenDiff, diff_run
from fcreplay.inputs.contract import Contract
from fcreplay.judge.free_calls import call_findings
from fcreplay.record import AttemptRecord
from fcreplay.traffic.cassette import load_traffic
from fcreplay.traffic.judging import LoopProblem, ToolDrift, history_problems, model_exchanges
from fcreplay.traffic.judging import tool_drifts as declared_drifts
from fcreplay.traffic.records import Conversation, exchange_records

REASONS = {
    "schema": "a blocking schema-diff difference in the tools a request sent",
    "history": "a broken tool-loop rule in a request's history",
    "failed": "a call that breaks its tool's schema, or calls an unknown tool",
    "error": "a provider error answer",
    "regression": "a golden entry that passed now fails",
    "fix": "a golden entry that failed now passes",
    "changed": "a golden entry whose decision changed",
    "flaky": "a golden entry whose signature distribution moved",
    "new": "an exchange without golden entry",
    "missing": "a golden entry no cassette has an exchange for",
}
"""Every reason `--fail-on` accepts in this mode, and what it counts."""
DEFAULT_FAIL_ON = ("schema", "history", "regression", "missing", "new")
DEFAULT_TARGET = "traffic"
"""The target of a cassette without an fcreplay block (written by another recorder)."""


def parse_fail_on(text: str) -> tuple[str, ...]:
    """Split a comma-separated list of reasons; ValueError names an unknown one."""
    reasons = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    for reason in reasons:
        if reason not in REASONS:
            raise ValueError(f"unknown reason {reason!r} (known: {', '.join(REASONS)})")
    return reasons


@dataclass(frozen=True)
class TrafficCheckResult:
    """Everything the check found in the cassettes, and whether it passes under `fail_on`."""

    cassettes: int
    records: tuple[AttemptRecord, ...]
    drifts: tuple[tuple[Path, ToolDrift], ...]
    """Every difference between declared tools and the contract (lossless ones included),
    with the cassette it is in."""
    problems: tuple[tuple[Path, LoopProblem], ...]
    golden: GoldenDiff | None
    """None when no golden folder was given."""
    fail_on: tuple[str, ...]

    @property
    def blocking(self) -> tuple[tuple[Path, ToolDrift], ...]:
        """The schema differences that are neither lossless nor allowed."""
        return tuple(item for item in self.drifts if item[1].blocking)

    def counts(self) -> dict[str, int]:
        """How many of each reason the cassettes show, whether or not the check fails on it."""
        golden = self.golden.counts() if self.golden else {}
        return {
            "schema": len(self.blocking),
            "history": len(self.problems),
            "failed": sum(r.verdict == "fail" for r in self.records),
            "error": sum(r.verdict == "error" for r in self.records),
            **{kind: golden.get(kind, 0) for kind in ("regression", "fix", "changed")},
            **{kind: golden.get(kind, 0) for kind in ("flaky", "new", "missing")},
        }

    @property
    def failures(self) -> dict[str, int]:
        """The fail-on reasons with a non-zero count."""
        counts = self.counts()
        return {reason: counts[reason] for reason in self.fail_on if counts[reason]}

    @property
    def ok(self) -> bool:
        """Whether the check passes."""
        return not self.failures

    def summary(self) -> str:
        """The one closing line: verdict, what failed, what was seen."""
        failures = self.failures
        verdict = (
            "check passed"
            if not failures
            else "check FAILED on " + ", ".join(f"{n} {reason}" for reason, n in failures.items())
        )
        counts = self.counts()
        golden = f"golden {self.golden.summary()}" if self.golden else "no golden folder given"
        return (
            f"{verdict}: {len(self.records)} model exchanges in {self.cassettes} cassettes, "
            f"{counts['schema']} blocking schema differences, {counts['history']} history "
            f"problems, {counts['failed']} failed, {counts['error']} errors; {golden}"
        )


def check_traffic(
    folder: Path,
    contract: Contract,
    *,
    run_id: str,
    allow: Iterable[str] = (),
    golden: Path | None = None,
    fail_on: Sequence[str] = DEFAULT_FAIL_ON,
) -> TrafficCheckResult:
    """Judge every cassette under `folder`; InputError when one cannot be read."""
    if not folder.is_dir():
        raise InputError.at(folder, None, "no such cassette folder")
    paths = [Path(p) for p in expand_paths([str(folder)])]
    if not paths:
        raise InputError.at(folder, None, "no cassettes (*.json, *.yaml) in this folder")
    records: list[AttemptRecord] = []
    drifts: list[tuple[Path, ToolDrift]] = []
    problems: list[tuple[Path, LoopProblem]] = []
    unreadable = []
    for path in paths:
        try:
            interactions = load_traffic(path) or []
        except InputError as exc:
            unreadable += exc.problems
            continue
        exchanges = model_exchanges(interactions)
        target, case_id = _identity(path, folder)
        conversation = Conversation(run_id, target, case_id, contract=contract)
        findings = {e.index: call_findings(e.outcome, contract) for e in exchanges}
        records += exchange_records(conversation, exchanges, findings=findings, expectations={})
        drifts += [(path, d) for d in declared_drifts(exchanges, contract, allow=allow)]
        problems += [(path, problem) for problem in history_problems(exchanges)]
    if unreadable:
        raise InputError(unreadable)
    return TrafficCheckResult(
        cassettes=len(paths),
        records=tuple(records),
        drifts=tuple(drifts),
        problems=tuple(problems),
        golden=None if golden is None else diff_run(records, golden, run_id=run_id),
        fail_on=tuple(fail_on),
    )


def _identity(path: Path, folder: Path) -> tuple[str, str]:
    """(target, case_id) of a cassette: its fcreplay block's, else the file's name."""
    meta = load_cassette(path).meta
    relative = path.relative_to(folder).with_suffix("").as_posix()
    if meta is None:
        return DEFAULT_TARGET, relative
    return meta.target or DEFAULT_TARGET, meta.case_id or relative
