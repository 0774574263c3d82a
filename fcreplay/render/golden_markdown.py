"""The golden diff as a pull-request comment that always fits under a size cap.

Order: a summary line; one section per class (regressions, fixes, flaky, changed,
stale, new, missing) with one row per case, its variants and targets folded; the
stale section grouped as one, with its causes and the re-record command; then the
details of each case (argument changes, the evidence of new findings, provenance),
folded in `<details>`. Whatever does not fit under `max_chars` is left out whole
(rows, then detail blocks, in that order) and summarised with counts at the end,
with a pointer to the full report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape as _html

from fcreplay.golden.diff import CLASSES, EntryDiff, GoldenDiff
from fcreplay.render.golden_parts import (
    TITLES,
    Words,
    by_case,
    comparison_lines,
    findings_text,
    fold,
    of_class,
    provenance_line,
    record_command,
    stale_causes,
    transition,
    words,
)
from fcreplay.render.markdown import cell, table
from fcreplay.schemadiff.classes import show_value

DEFAULT_MAX_CHARS = 60_000
"""A GitHub comment holds 65,536 characters; this leaves room for what CI adds."""
_TAIL_RESERVE = 1_500
"""Kept free for the closing summary of what was left out."""
_CELL = 160
"""Characters of one table cell's value."""
_CHANGES = 10
"""Argument changes listed per entry in the details."""


@dataclass
class _Page:
    """Lines under a budget; blocks that do not fit are counted, never cut in half."""

    budget: int | None
    lines: list[str] = field(default_factory=list)
    size: int = 0
    rows_left: dict[str, int] = field(default_factory=dict)
    """Per class: case rows left out."""
    details_left: int = 0
    full: bool = False

    def fits(self, block: Sequence[str]) -> bool:
        length = sum(len(line) + 1 for line in block)
        return self.budget is None or self.size + length <= self.budget

    def force(self, block: Sequence[str]) -> None:
        """Add the block whatever the budget (what must be said; kept short by the caller)."""
        self.lines += block
        self.size += sum(len(line) + 1 for line in block)

    def add(self, block: Sequence[str]) -> bool:
        """Add the block when it fits (and nothing before it was left out)."""
        if self.full or not self.fits(block):
            self.full = True
            return False
        self.lines += block
        self.size += sum(len(line) + 1 for line in block)
        return True


def render_markdown(
    diff: GoldenDiff, *, max_chars: int | None = DEFAULT_MAX_CHARS, full_report: str | None = None
) -> str:
    """The diff as Markdown of at most `max_chars` characters (None: no cap).

    `full_report` names where the whole diff is (a file CI keeps as an artifact), for
    the note that says what was left out.
    """
    page = _Page(None if max_chars is None else max_chars - _TAIL_RESERVE)
    said = words(diff)
    status = "no differences" if diff.clean else _counts(diff)
    compared = diff.comparison
    if compared is None:
        run = f" — run `{diff.run_id}`" if diff.run_id else ""
        page.add([f"**fcreplay golden diff** ({status}){run}"])
    else:
        runs = f"A `{compared.before.run_id}` → B `{compared.after.run_id}`"
        head = [escape(line) for line in comparison_lines(compared)]
        if max_chars is not None:
            # Always shown: cut to a third of the cap, however many targets the runs have.
            head = [_shorten(line, max_chars // 3 // len(head)) for line in head]
        page.force([f"**fcreplay run diff** ({status}) — {runs}", "", *(f"- {h}" for h in head)])
    for kind in CLASSES:
        entries = of_class(diff, kind)
        if entries:
            _section(page, diff, said, kind, entries)
    detailed = [(k, case, e) for k in CLASSES if k != "stale" for case, e in _cases(diff, k)]
    if detailed:
        page.add(["", "### Details"])
        page.full = False  # rows left out do not stop details of earlier rows
        for kind, case, entries in detailed:
            if not page.add(_details(diff, said, kind, case, entries)):
                page.details_left += 1
    tail = _tail(diff, said, page, max_chars, full_report)
    return "\n".join(page.lines + tail) + "\n"


def _counts(diff: GoldenDiff) -> str:
    counts = diff.counts()
    shown = " · ".join(f"{counts[kind]} {kind}" for kind in CLASSES if counts[kind])
    return f"{shown}; {len(diff.unchanged)} unchanged"


def _cases(diff: GoldenDiff, kind: str) -> list[tuple[str, list[EntryDiff]]]:
    return list(by_case(of_class(diff, kind)).items())


def _section(
    page: _Page, diff: GoldenDiff, said: Words, kind: str, entries: list[EntryDiff]
) -> None:
    cases = by_case(entries)
    noun = "entry" if len(entries) == 1 else "entries"
    head = ["", f"### {TITLES[kind]}: {len(entries)} {noun} in {len(cases)} cases", ""]
    head.append(f"_{said.meaning[kind]}._")
    if kind == "stale":
        head += ["", "```sh", record_command(diff), "```", ""]
        head += table(("cause", "entries"), [(cell(t), str(n)) for t, n in stale_causes(diff)])
    if not page.add(head):
        page.rows_left[kind] = len(cases)
        return
    rows = [_row(kind, case, group) for case, group in cases.items()]
    header = _header(kind, said)
    for index, row in enumerate(rows):
        block = ["", *table(header, [row])] if index == 0 else table(header, [row])[2:]
        if not page.add(block):
            page.rows_left[kind] = len(rows) - index
            return


def _header(kind: str, said: Words) -> tuple[str, ...]:
    if kind in ("stale", "new", "missing"):
        return ("case", "variants × targets")
    return ("case", "variants × targets", f"{said.before} → {said.after}", "findings")


def _row(kind: str, case: str, entries: list[EntryDiff]) -> tuple[str, ...]:
    where = cell(_cut(fold(entries)))
    if kind in ("stale", "new", "missing"):
        return (cell(case), where)
    changes = list(dict.fromkeys(transition(entry) for entry in entries))
    shown = _cut(changes[0]) + (f" (+{len(changes) - 1} other)" if len(changes) > 1 else "")
    return (cell(case), where, cell(shown), cell(findings_text(entries)) or "·")


def _details(
    diff: GoldenDiff, said: Words, kind: str, case: str, entries: list[EntryDiff]
) -> list[str]:
    noun = "entry" if len(entries) == 1 else "entries"
    lines = [
        "",
        f"<details><summary><b>{escape(case)}</b>: {kind} in {len(entries)} {noun}</summary>",
    ]
    for entry in entries:
        lines += ["", f"**{escape(entry.label)}**: {escape(transition(entry))}", ""]
        for item in entry.evidence:
            lines.append(f"- `{item.code}` at {escape(item.where)}: {escape(item.message)}")
            if item.excerpt is not None:
                lines.append(f"  - model said: «{_marked(item.excerpt, item.phrase)}»")
            if item.arguments is not None:
                lines.append(f"  - call: `{_code(item.arguments)}`")
            elif item.excerpt is None:
                lines.append(
                    f"  - expected `{_code(show_value(item.expected, 80))}`, "
                    f"got `{_code(show_value(item.actual, 80))}`"
                )
            if item.cassette:
                lines.append(f"  - cassette `{_code(item.cassette)}`")
        if entry.changes:
            shown = entry.changes[:_CHANGES]
            rows = [(f"`{_code(c.path or '/')}`", _value(c.before), _value(c.after)) for c in shown]
            lines += ["", *table(("path", said.before, said.after), rows)]
            if len(entry.changes) > _CHANGES:
                lines.append(f"\n… and {len(entry.changes) - _CHANGES} more changes")
        lines += ["", escape(provenance_line(entry, diff.comparison))]
    lines += ["", "</details>"]
    return lines


def _tail(
    diff: GoldenDiff, said: Words, page: _Page, max_chars: int | None, full_report: str | None
) -> list[str]:
    lines: list[str] = []
    left = [f"{n} {kind} case rows" for kind, n in page.rows_left.items() if n]
    if page.details_left:
        left.append(f"the details of {page.details_left} cases")
    if left:
        counts = diff.counts()
        every = ", ".join(f"{counts[k]} {k}" for k in CLASSES if counts[k])
        where = (
            f"the whole diff is in `{full_report}` (kept with this workflow run's artifacts)"
            if full_report
            else f"the whole diff: `{said.again}`"
        )
        lines += [
            "",
            f"_Cut to fit {max_chars:,} characters; not shown: {', '.join(left)} "
            f"(in all: {every}). {where[0].upper() + where[1:]}._",
        ]
    if said.hint and any(entry.kind != "stale" for entry in diff.diffs):
        lines += ["", f"_{said.hint}._"]
    return lines


def escape(text: str) -> str:
    """Text safe in Markdown outside code: no HTML tags; quotes stay readable."""
    return _html(text, quote=False)


def _marked(text: str, phrase: str | None) -> str:
    """The excerpt escaped, the matched phrase in bold."""
    if not phrase:
        return escape(text)
    at = text.casefold().find(phrase.casefold())
    if at < 0:
        return escape(text)
    end = at + len(phrase)
    return escape(text[:at]) + "**" + escape(text[at:end]) + "**" + escape(text[end:])


def _value(value: object) -> str:
    return f"`{_code(show_value(value, 80))}`"


def _code(text: str) -> str:
    return cell(text).replace("`", "'")


def _cut(text: str) -> str:
    return _shorten(text, _CELL)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
