"""Markdown tables for reports pasted into pull requests: escaped cells, aligned columns."""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence


def cell(text: str) -> str:
    """Text made safe for one table cell: pipes escaped, line breaks turned into spaces."""
    return text.replace("|", "\\|").replace("\n", " ")


def table(
    header: Sequence[str], rows: Iterable[Sequence[str]], *, right: Container[int] = ()
) -> list[str]:
    """The lines of a table; columns whose index is in `right` are right-aligned.

    Cells are written as given: escape text that may hold a pipe with `cell`.
    """
    align = ("---:" if index in right else "---" for index in range(len(header)))
    lines = [_row(header), "|" + "|".join(align) + "|"]
    lines += [_row(row) for row in rows]
    return lines


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
