"""The run report as one self-contained HTML file: inline CSS, no scripts, fonts or network."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape
from typing import Any

from fcreplay.metrics import METRICS
from fcreplay.record import AttemptRecord
from fcreplay.render.glossary import GLOSSARY, NOTES
from fcreplay.render.report_figures import HEADERS, notes, rate

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1b1b;background:#fff}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:middle}
th{background:#f3f3f3}td.num{text-align:right}
.metrics td{white-space:nowrap}
td.pass{background:#c8ecc8}td.fail{background:#f6c1c1}td.mixed{background:#fbe3a8}
td.error{background:#d5d5d5}td.none{background:#fff;color:#999}
.bar{display:inline-block;height:.8em;background:#4a78c2;vertical-align:middle}
.track{display:inline-block;width:8em;background:#e6e6e6;margin-right:.4em}
p.meta{color:#555}dt{font-weight:600;margin-top:.5em}dd{margin-left:1.5em}
"""

_OUTCOME_TITLE = {
    "pass": "every attempt passed",
    "fail": "every attempt has findings",
    "mixed": "some attempts passed, some did not",
    "error": "transport or provider errors only",
    "none": "not run",
}


def outcome(verdicts: Counter[str]) -> str:
    """The colour class of one matrix cell from the verdicts of its attempts."""
    if not verdicts:
        return "none"
    if set(verdicts) == {"pass"}:
        return "pass"
    if "pass" in verdicts:
        return "mixed"
    return "fail" if "fail" in verdicts else "error"


def render_html(report: dict[str, Any], records: Sequence[AttemptRecord]) -> str:
    """The whole page: header, metrics as bars, the case × target matrix, notes."""
    columns = [(r["target"], r["variant"]) for r in report["results"]]
    cases = list(dict.fromkeys(record.case_id for record in records))
    cells: dict[tuple[str, str, str], Counter[str]] = {}
    for record in records:
        key = (record.case_id, record.target, record.variant)
        cells.setdefault(key, Counter())[record.verdict] += 1
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>fcreplay report {escape(str(report['run_id']))}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>fcreplay report: run {escape(str(report['run_id']))}</h1>",
        '<p class="meta">prompt '
        f"{escape(str(report['prompt_version']))} · cases {escape(str(report['cases_version']))}"
        f" · contract {escape(str(report['contract_hash']))[:12]}</p>",
        "<h2>Metrics</h2>",
        _metrics_table(report),
        "<h2>Cases × targets</h2>",
        _legend(),
        _matrix(cases, columns, cells),
        *_by_tag(report),
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


def _glossary() -> str:
    items = [
        f'<dt id="{escape(term.name)}">{escape(term.name)}</dt>'
        f"<dd>{escape(term.definition)} Denominator: {escape(term.denominator)}.</dd>"
        for term in GLOSSARY
    ]
    items += [f"<dt>{escape(name)}</dt><dd>{escape(text)}</dd>" for name, text in NOTES]
    return "<h2>Glossary</h2><dl>" + "".join(items) + "</dl>"


def _metrics_table(report: dict[str, Any], key: str = "results") -> str:
    terms = {term.name: term.definition for term in GLOSSARY}
    head = "".join(
        f'<th title="{escape(terms[name])}">{escape(HEADERS[name])}</th>' for name in METRICS
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
    cells: dict[tuple[str, str, str], Counter[str]],
) -> str:
    targets = list(dict.fromkeys(target for target, _ in columns))
    top = "".join(
        f'<th colspan="{sum(t == target for t, _ in columns)}">{escape(target)}</th>'
        for target in targets
    )
    sub = "".join(f"<th>{escape(variant)}</th>" for _, variant in columns)
    rows = [
        f'<table class="matrix"><thead><tr><th rowspan="2">case</th>{top}</tr>'
        f"<tr>{sub}</tr></thead><tbody>"
    ]
    for case in cases:
        row = [f"<tr><th>{escape(case)}</th>"]
        for target, variant in columns:
            verdicts = cells.get((case, target, variant), Counter())
            kind = outcome(verdicts)
            total = sum(verdicts.values())
            text = f"{verdicts['pass']}/{total}" if total else "·"
            title = f"{target}/{variant}/{case}: {_OUTCOME_TITLE[kind]}"
            row.append(f'<td class="{kind}" title="{escape(title)}">{text}</td>')
        rows.append("".join(row) + "</tr>")
    rows.append("</tbody></table>")
    return "\n".join(rows)
