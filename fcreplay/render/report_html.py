"""The run report as one self-contained HTML file: inline CSS, no scripts, fonts or network.

The page: the run's figures, the case × target matrix (each cell links to its
drill-down), the golden comparison when a golden exists, the error table by case,
every cell's attempts turn by turn, the notes and the glossary of the columns.
Stale cells (the recording no longer matches) are painted apart from failures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape
from typing import Any

from fcreplay.golden.diff import EntryDiff, GoldenDiff
from fcreplay.metrics import METRICS
from fcreplay.record import AttemptRecord
from fcreplay.render.glossary import GLOSSARY, NOTES
from fcreplay.render.golden_parts import MEANING, side
from fcreplay.render.html_attempts import anchor, drill_down
from fcreplay.render.html_style import CSS
from fcreplay.render.report_errors import error_table
from fcreplay.render.report_figures import HEADERS, notes, rate
from fcreplay.render.report_operation import TERMS, operation_html
from fcreplay.stale import causes_of, describe

_OUTCOME_TITLE = {
    "pass": "every attempt passed",
    "fail": "every attempt has findings",
    "mixed": "some attempts passed, some did not",
    "error": "transport or provider errors only",
    "stale": "the recording no longer matches what the suite sends: re-record, not a result",
    "none": "not run",
}

_BADGE = {"regression": "R", "fix": "F", "flaky": "~", "changed": "C", "new": "N"}
"""The golden class of a cell, as a letter beside its count."""

Cell = tuple[str, str, str]
"""(case_id, target, variant)"""


def outcome(verdicts: Counter[str], stale: bool = False) -> str:
    """The colour class of one matrix cell from the verdicts of its attempts."""
    if stale:
        return "stale"
    if not verdicts:
        return "none"
    if set(verdicts) == {"pass"}:
        return "pass"
    if "pass" in verdicts:
        return "mixed"
    return "fail" if "fail" in verdicts else "error"


def render_html(
    report: dict[str, Any], records: Sequence[AttemptRecord], golden: GoldenDiff | None = None
) -> str:
    """The whole page (see the module docstring)."""
    columns = [(r["target"], r["variant"]) for r in report["results"]]
    cases = list(dict.fromkeys(record.case_id for record in records))
    grouped: dict[Cell, list[AttemptRecord]] = {}
    for record in records:
        grouped.setdefault((record.case_id, record.target, record.variant), []).append(record)
    diffs = {(d.case_id, d.target, d.variant): d for d in golden.diffs} if golden else {}
    run_id = escape(str(report["run_id"]))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width">',
        f"<title>fcreplay report {run_id}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>fcreplay report: run {run_id}</h1>",
        '<p class="meta">prompt '
        f"{escape(str(report['prompt_version']))} · cases {escape(str(report['cases_version']))}"
        f" · contract {escape(str(report['contract_hash']))[:12]}</p>",
        *_stale_warning(golden),
        "<h2>Metrics</h2>",
        _metrics_table(report),
        "<h2>Per completed attempt</h2><p>Every turn and retry of one case, to its end: "
        "compare these, not single requests.</p>",
        operation_html(report),
        "<h2>Cases × targets</h2>",
        "<p>Each cell: attempts passed / attempts; a letter is the golden class "
        "(R regression, F fix, ~ flaky, C changed, N new). Open a cell for its attempts.</p>",
        _legend(),
        _matrix(cases, columns, grouped, diffs),
        *_by_tag(report),
        *_golden_section(golden),
        *_errors(records),
        "<h2>Attempts</h2><p>One block per cell; open one by its cell or its heading.</p>",
        *(drill_down(group, diffs.get(key)) for key, group in grouped.items()),
        "<h2>Notes</h2><ul>",
        *(f"<li>{escape(note)}</li>" for note in notes(report)),
        "</ul>",
        _glossary(),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _by_tag(report: dict[str, Any]) -> list[str]:
    if not report.get("by_tag"):
        return []
    return [
        "<h2>Metrics per tag</h2>",
        "<p>A case counts under each of its tags; no figure mixes cases of different tags.</p>",
        _metrics_table(report, "by_tag"),
    ]


def _stale_warning(golden: GoldenDiff | None) -> list[str]:
    if golden is None or not golden.staleness:
        return []
    return [f'<p class="warn">{escape(golden.staleness.headline())}</p>']


def _glossary() -> str:
    items = [
        f'<dt id="{escape(term.name)}">{escape(term.name)}</dt>'
        f"<dd>{escape(term.definition)} Denominator: {escape(term.denominator)}.</dd>"
        for term in GLOSSARY
    ]
    items += [
        f'<dt id="{escape(term.name)}">{escape(term.name)}</dt>'
        f"<dd>{escape(term.definition)} Over: {escape(term.denominator)}.</dd>"
        for term in TERMS
    ]
    items += [f"<dt>{escape(name)}</dt><dd>{escape(text)}</dd>" for name, text in NOTES]
    return "<h2>Glossary</h2><dl>" + "".join(items) + "</dl>"


def _metrics_table(report: dict[str, Any], key: str = "results") -> str:
    terms = {term.name: term.definition for term in GLOSSARY}
    head = "".join(
        f'<th title="{escape(terms.get(name, ""))}"><a href="#{name}">{escape(HEADERS[name])}</a>'
        "</th>"
        for name in METRICS
    )
    tag_head = "<th>tag</th>" if key == "by_tag" else ""
    rows = [
        f'<table class="metrics"><thead><tr>{tag_head}<th>target</th><th>variant</th>'
        f"<th>attempts</th><th>errors</th>{head}</tr></thead><tbody>"
    ]
    for result in report.get(key, []):
        bars = "".join(f"<td>{_bar(result[name])}</td>" for name in METRICS)
        tag = f"<td>{escape(result['tag'])}</td>" if key == "by_tag" else ""
        rows.append(
            f"<tr>{tag}<td>{escape(result['target'])}</td><td>{escape(result['variant'])}</td>"
            f'<td class="num">{result["attempted"]}</td>'
            f'<td class="num">{result["transport_errors"]}</td>{bars}</tr>'
        )
    rows.append("</tbody></table>")
    return "\n".join(rows)


def _bar(value: float | None) -> str:
    if value is None:
        return '<span title="no denominator">—</span>'
    width = round(value * 100, 1)
    return (
        f'<span class="track"><span class="bar" style="width:{width}%"></span></span>'
        f"{escape(rate(value))}"
    )


def _legend() -> str:
    items = "".join(
        f'<td class="{name}">{escape(name)}: {escape(text)}</td>'
        for name, text in _OUTCOME_TITLE.items()
    )
    return f'<table class="legend"><tr>{items}</tr></table>'


def _matrix(
    cases: list[str],
    columns: list[tuple[str, str]],
    grouped: dict[Cell, list[AttemptRecord]],
    diffs: dict[Cell, EntryDiff],
) -> str:
    targets = list(dict.fromkeys(target for target, _ in columns))
    top = "".join(
        f'<th colspan="{sum(t == target for t, _ in columns)}">{escape(target)}</th>'
        for target in targets
    )
    sub = "".join(f"<th>{escape(variant)}</th>" for _, variant in columns)
    rows = [
        f'<table class="matrix" id="matrix"><thead><tr><th rowspan="2">case</th>{top}</tr>'
        f"<tr>{sub}</tr></thead><tbody>"
    ]
    for case in cases:
        row = [f"<tr><th>{escape(case)}</th>"]
        for target, variant in columns:
            group = grouped.get((case, target, variant), [])
            verdicts: Counter[str] = Counter(r.verdict for r in group)
            stale = any(causes_of(r) is not None for r in group)
            kind = outcome(verdicts, stale)
            title = f"{target}/{variant}/{case}: {_OUTCOME_TITLE[kind]}"
            if not group:
                row.append(f'<td class="{kind}" title="{escape(title)}">·</td>')
                continue
            text = f"{verdicts['pass']}/{sum(verdicts.values())}"
            diff = diffs.get((case, target, variant))
            badge = _BADGE.get(diff.kind, "") if diff is not None else ""
            if badge:
                text += f'<sup class="g">{escape(badge)}</sup>'
                title += f"; golden {diff.kind if diff else ''}"
            link = anchor(target, variant, case)
            row.append(
                f'<td class="{kind}" title="{escape(title)}"><a href="#{link}">{text}</a></td>'
            )
        rows.append("".join(row) + "</tr>")
    rows.append("</tbody></table>")
    return "\n".join(rows)


def _golden_section(golden: GoldenDiff | None) -> list[str]:
    if golden is None:
        return []
    head = f"<h2>Golden comparison</h2><p>{escape(golden.summary())}</p>"
    if golden.clean:
        return [head]
    rows = [
        '<table class="golden"><colgroup><col style="width:8%"><col style="width:22%">'
        '<col style="width:35%"><col style="width:35%"></colgroup>'
        "<thead><tr><th>class</th><th>entry</th><th>golden</th><th>now</th></tr></thead><tbody>"
    ]
    for diff in golden.diffs:
        now = side(diff.now)
        if diff.kind == "stale":
            now = "not compared: " + "; ".join(describe(cause) for cause in diff.causes)
        link = anchor(diff.target, diff.variant, diff.case_id)
        rows.append(
            f'<tr><td title="{escape(MEANING[diff.kind])}">{diff.kind}</td>'
            f'<td><a href="#{link}">{escape(diff.label)}</a></td>'
            f"<td>{escape(side(diff.golden))}</td><td>{escape(now)}</td></tr>"
        )
    rows.append("</tbody></table>")
    return [head, "\n".join(rows)]


def _errors(records: Sequence[AttemptRecord]) -> list[str]:
    grouped = error_table(records)
    if not grouped:
        return ["<h2>Errors</h2><p>No findings and no transport errors.</p>"]
    parts = [
        "<h2>Errors by case</h2>",
        '<table class="errors"><colgroup><col style="width:16%"><col style="width:11%">'
        '<col style="width:22%"><col style="width:31%"><col style="width:20%"></colgroup>'
        "<thead><tr><th>where</th><th>code</th><th>expected</th><th>came</th>"
        "<th>cassette</th></tr></thead><tbody>",
    ]
    for case, rows in grouped.items():
        parts.append(f'<tr><th colspan="5">{escape(case)} ({len(rows)})</th></tr>')
        parts += [
            f"<tr><td>{escape(row.where)}</td><td>{escape(row.code)}</td>"
            f"<td>{escape(row.expected)}</td><td>{escape(row.came)}</td>"
            f"<td><code>{escape(row.cassette or '')}</code></td></tr>"
            for row in rows
        ]
    parts.append("</tbody></table>")
    return parts
