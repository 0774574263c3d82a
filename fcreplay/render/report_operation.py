"""The report's operation table: tokens, latency and cost per completed attempt, in every format.

The words of each column (the HTML glossary's too) are `TERMS`; the formulas are in
`fcreplay.operation`.
"""

from __future__ import annotations

from typing import Any

from fcreplay.render.glossary import Term
from fcreplay.render.markdown import table

COLUMNS = (
    ("completed", "completed"),
    ("errors", "transport_error_rate"),
    ("requests", "requests_per_completed"),
    ("tokens p50", "tokens_p50"),
    ("tokens p95", "tokens_p95"),
    ("latency p50", "latency_ms_p50"),
    ("latency p95", "latency_ms_p95"),
    ("cost p50", "cost_p50"),
    ("cost p95", "cost_p95"),
    ("cost total", "cost_total"),
)
"""Column title and the key of `fcreplay.operation` figures it shows."""

COMPLETED = "attempts that got a decision to judge (whatever their verdict)"

TERMS: tuple[Term, ...] = (
    Term(
        "tokens",
        "Input plus output tokens of one attempt, summed over all its turns and retries, as "
        "each provider reported them (cached input and reasoning output included); shown "
        "as the median (p50) and the 95th percentile (p95). Compare these, not one request's.",
        COMPLETED + " whose every turn reported usage",
    ),
    Term(
        "latency",
        "The providers' answer time for one attempt in milliseconds, summed over its turns "
        "and retries, as measured when it was recorded (a replay shows the recorded "
        "figure); p50 and p95.",
        COMPLETED + " whose every turn has a recorded latency",
    ),
    Term(
        "cost",
        "The tokens of one attempt priced by the configured prices of its model (cached "
        "input at its own price when given); p50, p95 and the total. Blank without prices.",
        COMPLETED + " with a token figure and a price",
    ),
    Term(
        "requests",
        "HTTP requests per completed attempt on average: its turns plus the retries they needed.",
        COMPLETED,
    ),
    Term(
        "transport_error_rate",
        "Share of attempts that got no decision to judge: a refused connection, a provider "
        "error after its retries, a stream cut before its end.",
        "every attempt of the target × variant",
    ),
)
"""The operation columns in words."""


def shown(key: str, value: Any) -> str:
    """A figure as tables show it."""
    if value is None:
        return "—"
    if key == "transport_error_rate":
        return f"{value * 100:.1f}%"
    if key.startswith("cost"):
        return f"{value:.4f}"
    if key.startswith("latency"):
        return f"{value} ms"
    return str(value)


def _term(key: str) -> str:
    """The glossary term of a figure's key (`tokens_p95` -> `tokens`)."""
    for term in TERMS:
        if key.startswith(term.name.split("_")[0]):
            return term.name
    return key


def operation_rows(report: dict[str, Any]) -> list[list[str]]:
    """Header plus one row per target × variant."""
    rows = [["target/variant", *(title for title, _ in COLUMNS)]]
    for result in report["results"]:
        figures = result.get("operation", {})
        rows.append(
            [
                f"{result['target']}/{result['variant']}",
                *(shown(key, figures.get(key)) for _, key in COLUMNS),
            ]
        )
    return rows


def operation_text(report: dict[str, Any]) -> list[str]:
    """The table for a terminal, aligned, under its heading."""
    rows = operation_rows(report)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["per completed attempt (every turn and retry of one case, to its end):"]
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def operation_markdown(report: dict[str, Any]) -> list[str]:
    """The table for a pull request."""
    rows = operation_rows(report)
    return [
        "**Per completed attempt** (every turn and retry of one case, to its end)",
        "",
        *table(rows[0], rows[1:], right=range(1, len(rows[0]))),
    ]


def operation_html(report: dict[str, Any]) -> str:
    """The table for the HTML page, each column titled with its term."""
    # html compiles a large pattern when imported: only the HTML page pays for it.
    from html import escape

    terms = {term.name: term.definition for term in TERMS}
    head = "".join(
        f'<th title="{escape(terms.get(_term(key), COMPLETED))}">'
        f'<a href="#{_term(key)}">{escape(title)}</a></th>'
        if _term(key) in terms
        else f'<th title="{escape(COMPLETED)}">{escape(title)}</th>'
        for title, key in COLUMNS
    )
    rows = [f'<table class="metrics"><thead><tr><th>target/variant</th>{head}</tr></thead><tbody>']
    for row in operation_rows(report)[1:]:
        cells = "".join(f'<td class="num">{escape(cell)}</td>' for cell in row[1:])
        rows.append(f"<tr><td>{escape(row[0])}</td>{cells}</tr>")
    rows.append("</tbody></table>")
    return "\n".join(rows)
