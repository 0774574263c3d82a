"""The report's error table: every finding and every transport error, grouped by case.

Each row is one finding of one attempt with its evidence (what was expected, what came:
the model's words, the call, or the value, and the cassette), or one attempt that got
no answer with its reason. Text and Markdown render it here; HTML in `report_html`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fcreplay.evidence import Evidence, evidence_of
from fcreplay.record import AttemptRecord
from fcreplay.render.markdown import cell, table
from fcreplay.schemadiff.classes import show_value

ROWS_PER_CASE = 12
"""Rows shown per case in text and Markdown; the CSV has them all."""


@dataclass(frozen=True)
class ErrorRow:
    """One line of the error table."""

    where: str
    """`target/variant #attempt step N`."""
    code: str
    expected: str
    came: str
    """What the model (or the transport) gave instead."""
    cassette: str | None


def error_table(records: Sequence[AttemptRecord]) -> dict[str, list[ErrorRow]]:
    """Rows per case, cases and rows in record order."""
    grouped: dict[str, list[ErrorRow]] = {}
    for record in records:
        rows = grouped.setdefault(record.case_id, [])
        for finding in record.findings:
            rows.append(_row(evidence_of(record, finding)))
        error = record.transport_error
        if error is not None:
            where = f"{record.target}/{record.variant} #{record.attempt} step {len(record.steps)}"
            rows.append(ErrorRow(where, "transport_error", "an answer", error.message, None))
    return {case: rows for case, rows in grouped.items() if rows}


def _row(item: Evidence) -> ErrorRow:
    where = f"{item.target}/{item.variant} #{item.attempt} step {item.step}"
    if item.excerpt is not None:
        came = f"«{item.excerpt}»"
    elif item.arguments is not None:
        came = item.arguments
    else:
        came = show_value(item.actual, 100)
    if item.phrase is not None:
        expected = f"not «{item.phrase}»"
    elif item.expected is None or item.code == "request_drift":
        expected = item.message  # what the rule wants is its message
    else:
        expected = show_value(item.expected, 80)
    return ErrorRow(where, item.code, expected, came, item.cassette)


def error_text(records: Sequence[AttemptRecord]) -> list[str]:
    """The table for a terminal: a heading per case, a line per row."""
    grouped = error_table(records)
    if not grouped:
        return ["errors: none"]
    lines = [f"errors ({sum(map(len, grouped.values()))}), by case:"]
    for case, rows in grouped.items():
        lines.append(f"  {case}")
        for row in rows[:ROWS_PER_CASE]:
            lines.append(f"    {row.where}  {row.code}: expected {row.expected}; came {row.came}")
            if row.cassette:
                lines.append(f"      cassette {row.cassette}")
        if len(rows) > ROWS_PER_CASE:
            lines.append(f"    … and {len(rows) - ROWS_PER_CASE} more (`--format csv` lists all)")
    return lines


def error_markdown(records: Sequence[AttemptRecord]) -> list[str]:
    """The table for a pull request: one folded table per case."""
    grouped = error_table(records)
    if not grouped:
        return ["**Errors**: none"]
    lines = [f"**Errors** ({sum(map(len, grouped.values()))}), by case:"]
    for case, rows in grouped.items():
        lines += ["", f"<details><summary>{cell(case)}: {len(rows)}</summary>", ""]
        lines += table(
            ("where", "code", "expected", "came", "cassette"),
            [
                (
                    cell(row.where),
                    f"`{row.code}`",
                    cell(row.expected),
                    cell(row.came),
                    f"`{cell(row.cassette)}`" if row.cassette else "",
                )
                for row in rows[:ROWS_PER_CASE]
            ],
        )
        if len(rows) > ROWS_PER_CASE:
            lines += ["", f"… and {len(rows) - ROWS_PER_CASE} more (`--format csv` lists all)"]
        lines += ["", "</details>"]
    return lines
