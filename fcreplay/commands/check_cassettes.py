"""`check --cassette-dir` and `schema-diff --contract`: verdicts on any cassette set, printed."""

from __future__ import annotations

import json
from pathlib import Path

import click

MAX_SHOWN = 20
"""Lines listed per kind of problem; the closing line counts them all."""


def check_cassettes(
    folder: Path,
    contract_path: Path,
    golden: Path | None,
    allow: tuple[str, ...],
    runs: Path,
    fail_on: str | None,
) -> bool:
    """Judge the cassettes, write the run log, print what fails; True when the check passes."""
    from fcreplay.check_traffic import DEFAULT_FAIL_ON, check_traffic, parse_fail_on
    from fcreplay.inputs.contract import load_contract
    from fcreplay.render.report import build_report, render_text
    from fcreplay.runlog import RunLogWriter, new_run_id, run_log_path
    from fcreplay.runmarks import RunEnd

    try:
        reasons = DEFAULT_FAIL_ON if fail_on is None else parse_fail_on(fail_on)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--fail-on'") from None
    contract = load_contract(contract_path)
    run_id = new_run_id("check")
    try:
        result = check_traffic(
            folder, contract, run_id=run_id, allow=allow, golden=golden, fail_on=reasons
        )
    except ValueError as exc:  # an unknown class in --allow
        raise click.BadParameter(str(exc), param_hint="'--allow'") from None
    log = run_log_path(runs, run_id)
    with RunLogWriter(log, durable=False) as writer:
        for record in result.records:
            writer.append(record)
        writer.end(RunEnd(run_id, "check", True, len(result.records)))
    click.echo(f"checked {result.cassettes} cassettes in {folder} against {contract_path} ({log})")
    if result.records:
        click.echo(render_text(build_report(result.records, run_id)), nl=False)
    for path, drift in result.blocking[:MAX_SHOWN]:
        click.echo(f"schema {drift.kind}: {path}: {drift.line}")
    for path, problem in result.problems[:MAX_SHOWN]:
        click.echo(f"history: {path}: {problem.line}")
    shown_verdicts = {
        v for v, reason in (("fail", "failed"), ("error", "error")) if reason in reasons
    }
    for record in result.records:
        if record.verdict in shown_verdicts:
            for finding in record.findings[:MAX_SHOWN]:
                click.echo(f"{record.verdict}: {record.unit}: {finding.code} {finding.message}")
            if record.transport_error is not None:
                click.echo(f"{record.verdict}: {record.unit}: {record.transport_error.message}")
    if result.golden is not None:
        shown = [d for d in result.golden.diffs if d.kind in reasons][:MAX_SHOWN]
        for diff in shown:
            click.echo(f"golden {diff.kind}: {diff.label}")
    click.echo(result.summary())
    return result.ok


def schema_diff_cassettes(
    folder: Path, contract_path: Path, allow: tuple[str, ...], fmt: str
) -> bool:
    """Diff the tools every request in the cassettes sent against the contract; print it."""
    from fcreplay.check_traffic import check_traffic
    from fcreplay.inputs.contract import load_contract
    from fcreplay.runlog import new_run_id

    try:
        result = check_traffic(
            folder, load_contract(contract_path), run_id=new_run_id("schema"), allow=allow
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--allow'") from None
    blocking = result.blocking
    if fmt == "json":
        entries = [
            {
                "cassette": str(path),
                "exchange": drift.exchange.index,
                "tool": drift.tool,
                "pointer": drift.pointer,
                "class": drift.kind,
                "status": "blocking" if drift.blocking else "lossless or allowed",
            }
            for path, drift in result.drifts
        ]
        document = {"schema_diff": 1, "ok": not blocking, "blocking": len(blocking)}
        click.echo(json.dumps({**document, "entries": entries}, ensure_ascii=False, indent=2))
        return not blocking
    bullet = "- " if fmt == "markdown" else ""
    for path, drift in result.drifts:
        status = "BLOCKING" if drift.blocking else "ok"
        click.echo(f"{bullet}{status} {path}: {drift.line}")
    click.echo(
        f"{bullet}schema-diff: {len(blocking)} blocking differences in "
        f"{len(result.records)} model exchanges of {result.cassettes} cassettes"
    )
    return not blocking
