"""What each figure of the report means: the words of the HTML glossary and of docs/metrics.md.

`fcreplay.metrics` holds the formulas; this module says them for readers. A test
keeps docs/metrics.md using these exact words.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One figure: what it measures and over what."""

    name: str
    definition: str
    denominator: str


EVALUATED = (
    "evaluated attempts: every attempt of the target × variant (and tag) except those "
    "that ended in a transport or provider error or without a first decision"
)

GLOSSARY: tuple[Term, ...] = (
    Term(
        "decision_accuracy",
        "Share of attempts whose first-turn decision is right: it calls a tool exactly "
        "when the case expects a call, and otherwise gives the expected kind of answer "
        "(text or refusal; any answer without a call for no_call).",
        EVALUATED,
    ),
    Term(
        "tool_selection_accuracy",
        "Share of attempts that call the right tools on the first turn: no wrong_tool, "
        "unknown_tool, missing_call or unexpected_call finding there.",
        "evaluated attempts whose case expects a call",
    ),
    Term(
        "raw_schema_validity",
        "Share of calls whose arguments, as the model sent them, satisfy the tool's JSON "
        "Schema (class raw_valid; repairable and invalid calls do not count).",
        "every call of every turn of the evaluated attempts",
    ),
    Term(
        "exact_argument_accuracy",
        "Share of first-turn calls to a right tool whose arguments match the case: "
        "exactly, or under the case's matchers or rule set (no argument_mismatch or "
        "invalid_json finding). A call whose case names no expected arguments counts as "
        "matching.",
        "first-turn calls to a right tool (no wrong_tool, unknown_tool or unexpected_call "
        "at that call) in evaluated attempts whose case expects a call",
    ),
    Term(
        "unsafe_call_rate",
        "Share of attempts with an unsafe_call finding: a write tool called although the "
        "case does not ask for it. Lower is better.",
        EVALUATED,
    ),
    Term(
        "error_recovery_accuracy",
        "Share of attempts that handle a failed tool well: after the first tool result "
        "that is an error, no false_success, repeated_failed_call or step_limit finding, "
        "and no text_mismatch in the answer that follows.",
        "evaluated attempts in which a tool returned an error",
    ),
    Term(
        "consistency",
        "Share of cases whose evaluated attempts all gave the same first-turn signature "
        "(kind, call names and canonical arguments).",
        "cases with at least two evaluated attempts",
    ),
    Term(
        "positional_sensitivity",
        "Per target: share of cases whose set of first-turn signatures under reversed "
        "(tools declared in reverse order) differs from the set under auto.",
        "cases evaluated under both auto and reversed",
    ),
)
"""Every metric of the report, in report order, then the per-target figure."""

NOTES: tuple[tuple[str, str], ...] = (
    (
        "transport errors",
        "Attempts that got no decision to judge (a provider error, a refused connection, "
        "a missing recording) are counted apart and left out of every denominator.",
    ),
    (
        "normalizer bugs",
        "In the no_tools variant no tool is declared, so a parsed call is a bug of the "
        "response normalizer, counted apart.",
    ),
    (
        "per tag",
        "Each figure is also computed over the attempts of the cases carrying one tag, so "
        "cases of one language or one class are never mixed with others in that figure; "
        "a case with several tags counts under each.",
    ),
    (
        "forced",
        "The forced variant forces the expected tool, so it measures argument filling; it "
        "is reported apart and never mixed with auto.",
    ),
)
"""What else a reader needs to read the figures right."""
