"""The HTML report's drill-down: per matrix cell, each attempt turn by turn.

What was sent (the case's messages after the system prompt), what the model decided
(text or calls, its stop), what the tools answered, and the findings with their
evidence; the golden entry beside it when there is one. No script: a matrix cell (or
the drill-down's own heading) links to it, and CSS shows the body of the one that is
the page's `:target`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

from fcreplay.canonical import canonical_json
from fcreplay.decision import Decision
from fcreplay.evidence import evidence_of
from fcreplay.finding import Finding
from fcreplay.golden.diff import EntryDiff
from fcreplay.record import AttemptRecord, StepRecord
from fcreplay.render.golden_parts import MEANING, side
from fcreplay.stale import causes_of, describe

_TEXT = 600
"""Characters of a message or answer shown before it is cut."""
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def anchor(target: str, variant: str, case_id: str) -> str:
    """The id of a cell's drill-down (and the fragment its matrix cell links to)."""
    return "u-" + _SLUG.sub("-", f"{target}--{variant}--{case_id}")


def drill_down(records: Sequence[AttemptRecord], golden: EntryDiff | None) -> str:
    """One cell: its attempts, and its golden comparison when the entry differs."""
    first = records[0]
    verdicts = ", ".join(f"#{r.attempt} {r.verdict}" for r in records)
    name = anchor(first.target, first.variant, first.case_id)
    parts = [
        f'<section class="unit" id="{name}">',
        f'<h3><a href="#{name}">{escape(first.unit)}</a>: {escape(verdicts)}</h3>',
        '<div class="body"><p class="meta"><a href="#matrix">back to the matrix</a></p>',
    ]
    if golden is not None:
        parts.append(_golden(golden))
    if first.cassette:
        parts.append(f'<p class="meta">cassette <code>{escape(first.cassette)}</code></p>')
    parts += [_attempt(record) for record in records]
    parts.append("</div></section>")
    return "\n".join(parts)


def _golden(diff: EntryDiff) -> str:
    causes = ""
    if diff.kind == "stale":
        causes = "; " + "; ".join(escape(describe(cause)) for cause in diff.causes)
    return (
        f'<p class="golden g-{diff.kind}"><b>golden: {diff.kind}</b> '
        f"({escape(MEANING[diff.kind])}{causes})<br>golden {escape(side(diff.golden))}"
        f"<br>now {escape(side(diff.now))}</p>"
    )


def _attempt(record: AttemptRecord) -> str:
    items = [_sent(record)]
    for step in record.steps:
        items.append(_decision(step))
        if step.tool_results:
            results = "; ".join(
                f"{escape(result.name)} → {_code(canonical_json(result.content))}"
                + (' <span class="bad">(error)</span>' if result.is_error else "")
                for result in step.tool_results
            )
            items.append(f'<li class="results"><b>tool results</b> {results}</li>')
        items += [_finding(record, f) for f in record.findings if (f.step or 0) == step.step]
    # A drift stops the attempt before the turn it is found at: list it after the turns.
    items += [_finding(record, f) for f in record.findings if (f.step or 0) >= len(record.steps)]
    if record.transport_error is not None:
        items.append(
            f'<li class="error"><b>no answer</b> {escape(record.transport_error.message)}</li>'
        )
    stale = causes_of(record)
    if stale is not None:
        items.append(
            '<li class="stale"><b>stale recording</b> '
            + escape("; ".join(describe(cause) for cause in stale))
            + "</li>"
        )
    return (
        f'<section class="attempt"><h4>attempt {record.attempt}: '
        f'<span class="v-{record.verdict}">{record.verdict}</span></h4>'
        f'<ol class="turns">{"".join(items)}</ol></section>'
    )


def _sent(record: AttemptRecord) -> str:
    messages = "".join(
        f"<div><i>{escape(m.role)}</i> {escape(_cut(m.content))}</div>" for m in record.messages
    )
    prompt = f"system prompt {escape(record.prompt_version or '')}".rstrip()
    return f'<li class="sent"><b>sent</b> <i>{prompt}</i>{messages or " (not logged)"}</li>'


def _decision(step: StepRecord) -> str:
    decision: Decision = step.decision
    shown = []
    if decision.text:
        shown.append(f"«{escape(_cut(decision.text))}»")
    for call in decision.calls:
        arguments = call.arguments if call.arguments is not None else call.raw_arguments
        shown.append(f"{escape(call.name)} {_code(canonical_json(arguments))}")
    facts = [f"stop {decision.stop}"]
    if step.latency_ms is not None:
        facts.append(f"{step.latency_ms} ms")
    if step.retries:
        facts.append(f"{step.retries} retries")
    return (
        f'<li class="model"><b>model</b> <i>turn {step.step}, {escape(decision.kind)}</i> '
        f'{" ".join(shown)} <span class="meta">({escape(", ".join(facts))})</span></li>'
    )


def _finding(record: AttemptRecord, finding: Finding) -> str:
    item = evidence_of(record, finding)
    came = ""
    if item.excerpt is not None and item.code != "request_drift":
        came = f" — model said «{escape(item.excerpt)}»"
    elif item.arguments is not None:
        came = f" — call {_code(item.arguments)}"
    return f'<li class="finding"><b>{escape(item.code)}</b> {escape(item.message)}{came}</li>'


def _code(text: str) -> str:
    return f"<code>{escape(_cut(text))}</code>"


def _cut(text: str) -> str:
    return text if len(text) <= _TEXT else text[: _TEXT - 1] + "…"
