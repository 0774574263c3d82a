"""Golden diff output: text for terminals, Markdown for pull requests, JSON, JUnit XML for CI.

Stale entries (the recording is out of date) are never shown as model results: text
and Markdown group them under one heading with the re-record command, JUnit fails
them with type "stale", JSON classes them "stale" with their causes.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from fcreplay.golden.diff import EntryDiff, GoldenDiff
from fcreplay.render.golden_markdown import render_markdown
from fcreplay.render.golden_parts import (
    Words,
    by_case,
    comparison_lines,
    evidence_line,
    fold,
    of_class,
    record_command,
    side,
    stale_causes,
    words,
)
from fcreplay.schemadiff.classes import show_value

FORMATS = ("text", "markdown", "json", "junit")


def render(diff: GoldenDiff, fmt: str) -> str:
    """The diff in one of text, markdown, json, junit (markdown with its default cap)."""
    renderers = {
        "text": render_text,
        "markdown": lambda d: render_markdown(d),
        "json": lambda d: json.dumps(d.to_json(), ensure_ascii=False, indent=2) + "\n",
        "junit": render_junit,
    }
    return renderers[fmt](diff)


def detail_lines(diff: EntryDiff, said: Words) -> list[str]:
    """What changed in one entry, one fact a line, for text and JUnit."""
    lines = [
        f"{change.path}: {show_value(change.before, 80)} -> {show_value(change.after, 80)}"
        for change in diff.changes
    ]
    added, dropped = diff.findings_change()
    if added or dropped:
        lines.append("findings: " + " ".join([f"+{c}" for c in added] + [f"-{c}" for c in dropped]))
    lines += [evidence_line(item) for item in diff.evidence]
    if diff.kind == "new":
        lines.append(said.new_note)
    if diff.kind == "missing":
        lines.append(said.missing_note)
    return lines


def _headline(diff: GoldenDiff) -> list[str]:
    compared = diff.comparison
    if compared is not None:
        runs = f"A {compared.before.run_id} -> B {compared.after.run_id}"
        return [f"run diff: {runs}: {diff.summary()}", *comparison_lines(compared)]
    run = f"run {diff.run_id}: " if diff.run_id else ""
    return [f"golden diff: {run}{diff.summary()}"]


def render_text(diff: GoldenDiff) -> str:
    """The stale entries first as one block, then one line per other differing entry."""
    said = words(diff)
    lines = _headline(diff)
    stale = of_class(diff, "stale")
    if stale:
        causes = "; ".join(f"{text} ({n})" for text, n in stale_causes(diff))
        lines.append(
            f"stale: {len(stale)} entries not compared, {causes}; re-record with: "
            f"{record_command(diff)}"
        )
        lines += [f"    {case}: {fold(entries)}" for case, entries in by_case(stale).items()]
    for entry in diff.diffs:
        if entry.kind == "stale":
            continue
        lines.append(f"{entry.label}  {entry.kind}  {side(entry.golden)}  ->  {side(entry.now)}")
        lines += [f"    {line}" for line in detail_lines(entry, said)]
    if said.hint and any(entry.kind != "stale" for entry in diff.diffs):
        lines.append(said.hint)
    return "\n".join(lines) + "\n"


def render_junit(diff: GoldenDiff) -> str:
    """JUnit XML: a test suite per target, a test case per case × variant.

    Every differing class except `fix` is a failure (a stale one with type "stale"
    and the re-record command); a fix passes with a note, since only the golden is
    out of date.
    """
    said = words(diff)
    suites = ET.Element("testsuites", name=f"fcreplay {said.title}")
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
            if entry.kind == "stale":
                message = f"stale: {entry.label}: the recording is out of date, not a model result"
                body = "\n".join(
                    [
                        f"causes: {', '.join(entry.causes)}",
                        f"re-record: fcreplay record --target {entry.target} "
                        f"--variant {entry.variant} --case {entry.case_id}",
                    ]
                )
            else:
                message = f"{entry.kind}: {entry.label}"
                body = "\n".join(
                    [f"{side(entry.golden)} -> {side(entry.now)}", *detail_lines(entry, said)]
                )
            if entry.kind == "fix":
                ET.SubElement(case, "system-out").text = "fix: " + body
            else:
                failure = ET.SubElement(case, "failure", type=entry.kind, message=message)
                failure.text = body
        total += len(cases)
        failures += failed
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, "unicode") + "\n"
