"""Golden diff output: text for terminals, Markdown for pull requests, JSON, JUnit XML for CI."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

from fcreplay.golden.diff import EntryDiff, GoldenDiff
from fcreplay.render.markdown import cell, table
from fcreplay.schemadiff.classes import show_value
from fcreplay.structdiff import Difference

UPDATE_HINT = "accept with `fcreplay golden update --reason TEXT` (add --case ID to pick entries)"


def render(diff: GoldenDiff, fmt: str) -> str:
    """The diff in one of text, markdown, json, junit."""
    renderers = {
        "text": render_text,
        "markdown": render_markdown,
        "json": lambda d: json.dumps(d.to_json(), ensure_ascii=False, indent=2) + "\n",
        "junit": render_junit,
    }
    return renderers[fmt](diff)


def _side(entry: Any) -> str:
    return entry.summary() if entry is not None else "(none)"


def _detail_lines(diff: EntryDiff) -> list[str]:
    """What changed in one entry, one fact a line, for text and JUnit."""
    lines = [
        f"{change.path}: {show_value(change.before, 80)} -> {show_value(change.after, 80)}"
        for change in diff.changes
    ]
    added, dropped = diff.findings_change()
    if added or dropped:
        lines.append("findings: " + " ".join([f"+{c}" for c in added] + [f"-{c}" for c in dropped]))
    if diff.kind == "new":
        lines.append("no golden entry yet; " + UPDATE_HINT)
    if diff.kind == "missing":
        lines.append("the run has no attempt for this golden entry")
    return lines


def _headline(diff: GoldenDiff) -> str:
    run = f"run {diff.run_id}: " if diff.run_id else ""
    return f"golden diff: {run}{diff.summary()}"


def render_text(diff: GoldenDiff) -> str:
    """One line per differing entry, its details indented below it."""
    lines = [_headline(diff)]
    for entry in diff.diffs:
        lines.append(f"{entry.label}  {entry.kind}  {_side(entry.golden)}  ->  {_side(entry.now)}")
        lines += [f"    {line}" for line in _detail_lines(entry)]
    if diff.diffs:
        lines.append(UPDATE_HINT)
    return "\n".join(lines) + "\n"


def _code(value: Any) -> str:
    return "`" + cell(show_value(value, 80)).replace("`", "'") + "`"


def _change_table(changes: tuple[Difference, ...]) -> list[str]:
    rows = [(f"`{cell(c.path or '/')}`", _code(c.before), _code(c.after)) for c in changes]
    return table(("path", "golden", "now"), rows)


def render_markdown(diff: GoldenDiff) -> str:
    """Summary line, one table per target, the details of each entry folded."""
    counts = diff.counts()
    status = "no differences" if diff.clean else diff.summary()
    lines = [
        f"**fcreplay golden diff** ({status})" + (f" — run `{diff.run_id}`" if diff.run_id else "")
    ]
    targets = list(dict.fromkeys(d.target for d in diff.diffs))
    for target in targets:
        entries = [d for d in diff.diffs if d.target == target]
        lines += ["", f"### {cell(target)}", ""]
        lines += table(
            ("case", "variant", "class", "golden", "now"),
            [
                (
                    cell(entry.case_id),
                    cell(entry.variant),
                    f"**{entry.kind}**",
                    cell(_side(entry.golden)),
                    cell(_side(entry.now)),
                )
                for entry in entries
            ],
        )
        for entry in entries:
            lines += [
                "",
                f"<details><summary>{cell(entry.label)}: {entry.kind}</summary>",
                "",
            ]
            if entry.changes:
                lines += [*_change_table(entry.changes), ""]
            added, dropped = entry.findings_change()
            if added or dropped:
                shown = [f"+`{c}`" for c in added] + [f"−`{c}`" for c in dropped]
                lines += ["findings: " + " ".join(shown), ""]
            if entry.golden is not None:
                lines += [_provenance_line(entry), ""]
            lines.append("</details>")
    if not diff.clean:
        total = sum(counts.values())
        lines += [
            "",
            f"_{total} {'entry differs' if total == 1 else 'entries differ'}; {UPDATE_HINT}._",
        ]
    return "\n".join(lines) + "\n"


def _provenance_line(entry: EntryDiff) -> str:
    provenance = entry.golden.provenance if entry.golden else None
    if provenance is None:
        return "golden: no provenance"
    return (
        f"golden from run `{provenance.run_id}` ({provenance.recorded_at}, model "
        f"`{provenance.model_reported or provenance.model}`): {cell(provenance.reason)}"
    )


def render_junit(diff: GoldenDiff) -> str:
    """JUnit XML: a test suite per target, a test case per case × variant.

    Every differing class except `fix` is a failure; a fix passes with a note,
    since only the golden is out of date.
    """
    suites = ET.Element("testsuites", name="fcreplay golden diff")
    by_target: dict[str, list[tuple[str, str, EntryDiff | None]]] = {}
    for target, case_id, variant in diff.unchanged:
        by_target.setdefault(target, []).append((case_id, variant, None))
    for changed in diff.diffs:
        by_target.setdefault(changed.target, []).append((changed.case_id, changed.variant, changed))
    total = failures = 0
    for target in sorted(by_target):
        cases = sorted(by_target[target], key=lambda item: (item[0], item[1]))
        failed = sum(1 for *_, entry in cases if entry is not None and entry.kind != "fix")
        suite = ET.SubElement(
            suites, "testsuite", name=target, tests=str(len(cases)), failures=str(failed)
        )
        for case_id, variant, entry in cases:
            case = ET.SubElement(
                suite, "testcase", classname=f"fcreplay.{target}", name=f"{case_id} [{variant}]"
            )
            if entry is None:
                continue
            body = "\n".join(
                [f"{_side(entry.golden)} -> {_side(entry.now)}", *_detail_lines(entry)]
            )
            if entry.kind == "fix":
                ET.SubElement(case, "system-out").text = "fix: " + body
            else:
                failure = ET.SubElement(
                    case, "failure", type=entry.kind, message=f"{entry.kind}: {entry.label}"
                )
                failure.text = body
        total += len(cases)
        failures += failed
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, "unicode") + "\n"
