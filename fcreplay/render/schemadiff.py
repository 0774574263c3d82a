"""Schema diff output: aligned text for terminals, Markdown for pull requests, JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator

from fcreplay.render.markdown import cell, table
from fcreplay.schemadiff.classes import CLASSES, show_value
from fcreplay.schemadiff.result import SchemaDiffEntry, SchemaDiffResult

FORMATS = ("text", "json", "markdown")
_MARKDOWN_HEADER = (
    "status",
    "target",
    "tool",
    "pointer",
    "class",
    "contract",
    "sent",
    "count",
    "example",
)


def render(result: SchemaDiffResult, fmt: str) -> str:
    """The result as "text", "json" or "markdown", ending with a newline."""
    if fmt == "json":
        return json.dumps(result.to_json(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if fmt == "markdown":
        return _markdown(result) + "\n"
    if fmt == "text":
        return _text(result) + "\n"
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def _summary(result: SchemaDiffResult) -> str:
    return (
        f"{result.requests} requests in {result.cassettes} cassettes, "
        f"{result.declarations} distinct tool declarations"
    )


def _footer(result: SchemaDiffResult) -> Iterator[str]:
    if result.missing:
        yield (
            f"note: {len(result.missing)} planned cassettes are not recorded "
            f"(first: {result.missing[0]}); `fcreplay replay` reports them"
        )
    for reason in result.skipped[:10]:
        yield f"note: skipped {reason}"
    if len(result.skipped) > 10:
        yield f"note: ... and {len(result.skipped) - 10} more skipped"
    if result.blocking:
        kinds = sorted({e.kind for e in result.blocking}, key=CLASSES.index)
        yield (
            f"schema-diff: {len(result.blocking)} blocking differences ({', '.join(kinds)}); "
            "allow a class with --allow CLASS or schema_diff_allow in the suite config"
        )
    elif result.entries:
        yield "schema-diff: no blocking differences"


def _text(result: SchemaDiffResult) -> str:
    lines = [f"schema-diff: {_summary(result)}"]
    if not result.entries:
        lines.append("schema-diff: every sent tool declaration matches the contract")
    rows = [
        [
            entry.status.upper() if entry.status == "blocking" else entry.status,
            entry.target,
            entry.tool or "-",
            entry.pointer or "-",
            entry.kind + (" (adapter transform)" if entry.documented else ""),
            f"contract {show_value(entry.contract)}",
            f"sent {show_value(entry.sent)}",
            f"x{entry.count}",
            entry.example,
        ]
        for entry in result.entries
    ]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(5)]
    for row in rows:
        head = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:5]))
        lines.append(f"  {head}  {row[5]}  {row[6]}  {row[7]}  e.g. {row[8]}")
    lines += _footer(result)
    return "\n".join(lines)


def _markdown(result: SchemaDiffResult) -> str:
    lines = [f"**schema-diff**: {_summary(result)}", ""]
    if not result.entries:
        lines.append("Every sent tool declaration matches the contract.")
    else:
        rows = [[cell(text) for text in _markdown_cells(entry)] for entry in result.entries]
        lines += table(_MARKDOWN_HEADER, rows, right={_MARKDOWN_HEADER.index("count")})
    footer = list(_footer(result))
    if footer:
        lines.append("")
        lines += footer
    return "\n".join(lines)


def _markdown_cells(e: SchemaDiffEntry) -> list[str]:
    kind = e.kind + (" (adapter transform)" if e.documented else "")
    status = f"**{e.status}**" if e.status == "blocking" else e.status
    return [
        status,
        e.target,
        f"`{e.tool}`" if e.tool else "",
        f"`{e.pointer}`" if e.pointer else "",
        f"`{kind}`",
        f"`{show_value(e.contract, 80)}`",
        f"`{show_value(e.sent, 80)}`",
        str(e.count),
        f"`{e.example}`",
    ]
