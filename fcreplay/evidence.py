"""A finding with its evidence: what was expected, what came, where it is recorded.

Every review output shows a finding through this, so a reviewer sees the model's own
words for a text finding (the forbidden phrase marked for `false_success`), the call's
arguments for an argument finding, and the cassette to open, not just a code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fcreplay.canonical import canonical_json
from fcreplay.finding import Finding
from fcreplay.quickinit import quick
from fcreplay.record import AttemptRecord

EXCERPT = 160
"""Characters of the model's text shown around what a text finding is about."""
_CALL = re.compile(r"^/calls/(\d+)(?:/|$)")


@quick
@dataclass(frozen=True)
class Evidence:
    """One finding of one attempt, with the excerpt and arguments that show it."""

    target: str
    variant: str
    case_id: str
    attempt: int
    step: int
    code: str
    message: str
    expected: Any
    actual: Any
    excerpt: str | None
    """The model's text at that turn, cut around the matched phrase when there is one."""
    phrase: str | None
    """For a forbidden phrase (`false_success`): the phrase that matched."""
    arguments: str | None
    """For a finding about a call: that call's name and arguments, as canonical JSON."""
    cassette: str | None

    @property
    def where(self) -> str:
        """`target/variant/case #attempt step N`."""
        return f"{self.target}/{self.variant}/{self.case_id} #{self.attempt} step {self.step}"

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return dict(self.__dict__)


def evidence_of(record: AttemptRecord, finding: Finding) -> Evidence:
    """The evidence of one finding of `record`."""
    step = finding.step or 0
    decision = record.steps[step].decision if step < len(record.steps) else None
    text = decision.text if decision is not None else None
    phrase = _phrase(finding.expected)
    arguments = None
    match = _CALL.match(finding.path)
    if decision is not None and match and int(match.group(1)) < len(decision.calls):
        call = decision.calls[int(match.group(1))]
        shown = call.arguments if call.arguments is not None else call.raw_arguments
        arguments = f"{call.name} {canonical_json(shown)}"
    return Evidence(
        target=record.target,
        variant=record.variant,
        case_id=record.case_id,
        attempt=record.attempt,
        step=step,
        code=finding.code,
        message=finding.message,
        expected=finding.expected,
        actual=finding.actual,
        excerpt=excerpt(text, phrase) if finding.path.startswith("/text") or phrase else None,
        phrase=phrase,
        arguments=arguments,
        cassette=record.cassette,
    )


def first_evidence(records: Iterable[AttemptRecord], codes: Sequence[str]) -> list[Evidence]:
    """For each code, the evidence of its first finding in `records` (in record order)."""
    found: dict[str, Evidence] = {}
    for record in records:
        for finding in record.findings:
            if finding.code in codes and finding.code not in found:
                found[finding.code] = evidence_of(record, finding)
    return [found[code] for code in codes if code in found]


def excerpt(text: str | None, phrase: str | None = None, width: int = EXCERPT) -> str | None:
    """`text` cut to about `width` characters, centred on `phrase` when it occurs."""
    if text is None:
        return None
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    at = flat.casefold().find(phrase.casefold()) if phrase else -1
    start = 0 if at < 0 else max(0, at - (width - len(phrase or "")) // 2)
    end = min(len(flat), start + width)
    start = max(0, end - width)
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")


def _phrase(expected: Any) -> str | None:
    if isinstance(expected, dict) and isinstance(expected.get("must_not_contain"), str):
        return str(expected["must_not_contain"])
    return None
