"""The run report: metrics per target × variant and the error table, as text, JSON, CSV or Markdown.

The JSON follows the seed's report shape (run_id, contract_hash, prompt_version,
cases_version, one `results` entry per target, model and variant with the metrics,
null where a metric has no denominator), extended with the variant, attempt
counts and positional sensitivity. HTML lives in `report_html`; what every format
shows alike (metric titles, rates, notes) in `report_figures`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fcreplay.golden.diff import GoldenDiff
from fcreplay.inputs.prices import Price
from fcreplay.metrics import METRICS, Tally, positional_sensitivity, tally, tally_by_tag
from fcreplay.operation import operation_figures
from fcreplay.record import AttemptRecord
from fcreplay.render.markdown import table
from fcreplay.render.report_errors import error_markdown, error_text
from fcreplay.render.report_figures import HEADERS, notes, rate
from fcreplay.render.report_operation import operation_markdown, operation_text

REPORT_FORMAT = 1

ERROR_COLUMNS = (
    "target",
    "model",
    "variant",
    "case_id",
    "attempt",
    "step",
    "code",
    "path",
    "expected",
    "actual",
)


def build_report(
    records: Sequence[AttemptRecord],
    run_id: str | None = None,
    *,
    by_tag: bool = False,
    prices: Mapping[str, Price] | None = None,
) -> dict[str, Any]:
    """The JSON-ready report of a run's attempt records (with `prices`, what each
    completed operation cost; see `fcreplay.operation`).

    With `by_tag`, `by_tag` lists the same results per case tag (when cases have tags).
    """
    extra: dict[str, Any] = {}
    if by_tag and any(record.tags for record in records):
        extra["by_tag"] = [
            {"tag": tag, **_result(target, variant, counts)}
            for (tag, target, variant), counts in tally_by_tag(records).items()
        ]
    return report_of(
        tally(records),
        operation_figures(records, prices),
        run_id or _single(r.run_id for r in records),
        {name: [getattr(r, name) for r in records] for name in SHARED},
        extra,
    )


SHARED = ("contract_hash", "prompt_version", "cases_version", "fcreplay_version")
"""Record fields the report gives once for the whole run."""


def report_of(
    tallies: Mapping[tuple[str, str], Tally],
    spent: Mapping[tuple[str, str], dict[str, Any]],
    run_id: Any,
    shared: Mapping[str, Iterable[str | None]],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The report from its parts: the tallies and operation figures per target × variant
    and, per SHARED field, every value the records hold (check's cache keeps these parts)."""
    results = [_result(target, variant, counts) for (target, variant), counts in tallies.items()]
    for result in results:
        result["operation"] = spent[(str(result["target"]), str(result["variant"]))]
    return {
        "fcreplay_report": REPORT_FORMAT,
        "run_id": run_id,
        **{name: _single(shared[name]) for name in SHARED},
        "results": results,
        "positional_sensitivity": positional_sensitivity(dict(tallies)),
        **(extra or {}),
    }


def _result(target: str, variant: str, counts: Tally) -> dict[str, Any]:
    reported = sorted(counts.models_reported)
    return {
        "target": target,
        "provider": counts.adapter,
        "model": counts.model,
        "model_reported": reported[0] if len(reported) == 1 else (reported or None),
        "variant": variant,
        "cases": len(counts.cases),
        "attempted": counts.attempted,
        "transport_errors": counts.transport_errors,
        "request_drift": counts.request_drift,
        "normalizer_bugs": counts.normalizer_bugs,
        **counts.metrics(),
        "counts": counts.counts(),
    }


def _single(seen: Iterable[str | None]) -> Any:
    """The value all records share, or the sorted distinct values when they disagree."""
    values = sorted({value for value in seen if value is not None})
    return values[0] if len(values) == 1 else (values or None)


def metric_rows(report: dict[str, Any], key: str = "results") -> list[list[str]]:
    """Header plus one row per result: target/variant, counts, then each metric.

    With key "by_tag", the rows of the per-tag results, each led by its tag.
    """
    rows = [["target/variant", "attempts", "errors", *HEADERS.values()]]
    if key == "by_tag":
        rows[0][0] = "tag: target/variant"
    for result in report.get(key, []):
        label = f"{result['target']}/{result['variant']}"
        rows.append(
            [
                f"{result['tag']}: {label}" if key == "by_tag" else label,
                str(result["attempted"]),
                str(result["transport_errors"]),
                *(rate(result[name]) for name in METRICS),
            ]
        )
    return rows


def render_text(report: dict[str, Any]) -> str:
    """A terminal table with a header line and the notes below it (then the tags', if any)."""
    lines = [f"run {report['run_id']}  prompt {report['prompt_version']}"]
    lines += _aligned(metric_rows(report))
    lines += notes(report)
    if report.get("by_tag"):
        lines += ["", "per tag (a case counts under each of its tags)"]
        lines += _aligned(metric_rows(report, "by_tag"))
    return "\n".join(lines) + "\n"


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            [row[0].ljust(widths[0])]
            + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        ).rstrip()
        for row in rows
    ]


def render_markdown(report: dict[str, Any]) -> str:
    """A Markdown table of the metrics, ready to paste into a pull request."""
    rows = metric_rows(report)
    lines = [f"**fcreplay report** run `{report['run_id']}`", ""]
    lines += table(rows[0], rows[1:], right=range(1, len(rows[0])))
    lines.append("")
    lines += [f"- {note}" for note in notes(report)]
    if report.get("by_tag"):
        tagged = metric_rows(report, "by_tag")
        lines += ["", "**per tag** (a case counts under each of its tags)", ""]
        lines += table(tagged[0], tagged[1:], right=range(1, len(tagged[0])))
    return "\n".join(lines) + "\n"


def render_json(report: dict[str, Any]) -> str:
    """The report as indented JSON."""
    return json.dumps(report, ensure_ascii=False, indent=2) + "\n"


def error_rows(records: Sequence[AttemptRecord]) -> list[list[Any]]:
    """One row per finding and per transport error, columns as in ERROR_COLUMNS."""
    rows: list[list[Any]] = []
    for record in records:
        head = [record.target, record.model, record.variant, record.case_id]
        for finding in record.findings:
            rows.append(
                [
                    *head,
                    record.attempt,
                    finding.step,
                    finding.code,
                    finding.path,
                    _cell(finding.expected),
                    _cell(finding.actual),
                ]
            )
        error = record.transport_error
        if error:
            actual = f"{error.type}: {error.message}"
            rows.append(
                [*head, record.attempt, len(record.steps), "transport_error", "", "", actual]
            )
    return rows


def render_csv(records: Sequence[AttemptRecord]) -> str:
    """The error table as CSV (values that are not strings written as compact JSON)."""
    import csv

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ERROR_COLUMNS)
    writer.writerows(error_rows(records))
    return out.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render(
    records: Sequence[AttemptRecord],
    fmt: str,
    golden: GoldenDiff | None = None,
    prices: Mapping[str, Price] | None = None,
) -> str:
    """The report of a run's attempt records in one of text, json, csv, markdown, html,
    with the figures per case tag beside the overall ones; text, Markdown and HTML show
    what each completed operation cost and end with the error table by case; HTML
    compares with the golden when one is given."""
    if fmt == "csv":
        return render_csv(records)
    report = build_report(records, by_tag=True, prices=prices)
    if fmt == "html":
        from fcreplay.render.report_html import render_html  # HTML only when asked for

        return render_html(report, records, golden)
    if fmt == "text":
        tail = ["", *operation_text(report), "", *error_text(records)]
        return render_text(report) + "\n".join(tail) + "\n"
    if fmt == "markdown":
        tail = ["", *operation_markdown(report), "", *error_markdown(records)]
        return render_markdown(report) + "\n".join(tail) + "\n"
    return render_json(report)
