"""Comparing a call's arguments with the expected ones: exactly, through matchers, or by BFCL.

Without matchers every leaf is compared canonically (`2.5` != `"2.5"`, `{}` != missing).
A matcher (see `fcreplay.inputs.matchers`) replaces that comparison at its pointer and
below. The `bfcl` rule set hands the whole comparison to `fcreplay.judge.bfcl`. The
JSON Schema check is separate and never loosened by any of this.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from fcreplay.canonical import canonical_json, same_value
from fcreplay.inputs.cases import ExpectedCall
from fcreplay.inputs.matchers import ArgumentMatcher, pointer_parts
from fcreplay.judge.bfcl import bfcl_differences, standardize
from fcreplay.judge.mismatch import ArgumentMismatch
from fcreplay.sources import pointer

MISSING: Any = object()
"""Marks an absent key; it reaches findings as null with "(missing)" in the message."""

_PUNCTUATION_OR_SPACE = re.compile(r"[\W_]+", re.UNICODE)


def argument_differences(
    wanted: ExpectedCall, got: dict[str, Any], parameters: Mapping[str, Any]
) -> list[ArgumentMismatch]:
    """How `got` differs from the expected call's arguments under its matchers or rules.

    `parameters` is the tool's JSON Schema; the `bfcl` rules read declared types from it.
    """
    if wanted.arguments is None:
        return []
    if wanted.rules == "bfcl":
        return bfcl_differences(parameters, wanted.arguments, got)
    matchers = {matcher.pointer: matcher for matcher in wanted.matchers}
    children: dict[str, set[str]] = {}
    for where in matchers:
        parent = where.rsplit("/", 1)[0]
        children.setdefault(parent, set()).add(pointer_parts(where)[-1])
    return _walk(wanted.arguments, got, "", matchers, children)


def show(value: Any) -> str:
    """A value as messages show it: canonical JSON, or "(missing)"."""
    return "(missing)" if value is MISSING else canonical_json(value)


def _walk(
    want: Any,
    got: Any,
    at: str,
    matchers: dict[str, ArgumentMatcher],
    children: dict[str, set[str]],
) -> list[ArgumentMismatch]:
    if isinstance(want, dict) and isinstance(got, dict):
        found = []
        for key in sorted(set(want) | set(got) | children.get(at, set())):
            where = at + pointer(key)
            left, right = want.get(key, MISSING), got.get(key, MISSING)
            if where in matchers:
                found += _apply(matchers[where], left, right, where)
            elif left is MISSING and right is MISSING:
                continue
            elif left is MISSING or right is MISSING:
                found.append(_exact(where, left, right))
            else:
                found += _walk(left, right, where, matchers, children)
        return found
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        found = []
        for index, (left, right) in enumerate(zip(want, got, strict=True)):
            where = at + pointer(index)
            if where in matchers:
                found += _apply(matchers[where], left, right, where)
            else:
                found += _walk(left, right, where, matchers, children)
        return found
    return [] if same_value(want, got) else [_exact(at, want, got)]


def _exact(at: str, want: Any, got: Any) -> ArgumentMismatch:
    return ArgumentMismatch(
        at,
        None if want is MISSING else want,
        None if got is MISSING else got,
        f"expected {show(want)}, got {show(got)}",
    )


def _apply(matcher: ArgumentMatcher, want: Any, got: Any, at: str) -> list[ArgumentMismatch]:
    """The matcher's verdict on one argument (`want` from `arguments`, maybe MISSING)."""
    alternatives = matcher.any_of if matcher.any_of is not None else None
    if alternatives is None and want is not MISSING:
        alternatives = (want,)
    shown = list(alternatives) if alternatives is not None else None
    expected = shown[0] if shown is not None and matcher.any_of is None else shown

    def fail(message: str) -> list[ArgumentMismatch]:
        actual = None if got is MISSING else got
        text = f"{message} (matcher: {matcher.name})"
        return [ArgumentMismatch(at, expected, actual, text, matcher.name)]

    if got is MISSING:
        return [] if matcher.optional else fail("missing, and the case does not allow omitting it")
    if matcher.present:
        return []
    if matcher.regex is not None:
        if isinstance(got, str) and re.fullmatch(matcher.regex, got):
            return []
        return fail(f"expected a string matching /{matcher.regex}/, got {show(got)}")
    if alternatives is None:
        return []  # optional with no value: any value passes when given
    if any(_same(alternative, got, matcher) for alternative in alternatives):
        return []
    wanted = (
        "one of " + ", ".join(show(a) for a in alternatives)
        if len(alternatives) > 1
        else show(alternatives[0])
    )
    return fail(f"expected {wanted}, got {show(got)}")


def _same(want: Any, got: Any, matcher: ArgumentMatcher) -> bool:
    """Equality under the matcher's comparison (normalized strings, tolerance, arrays)."""
    if matcher.array is not None and isinstance(want, list) and isinstance(got, list):
        return _arrays(want, got, matcher)
    return _equal(want, got, matcher)


def _equal(want: Any, got: Any, matcher: ArgumentMatcher) -> bool:
    if isinstance(want, str) and isinstance(got, str) and matcher.normalized is not None:
        return _normal(want, matcher) == _normal(got, matcher)
    if _number(want) and _number(got) and matcher.tolerance is not None:
        return bool(abs(want - got) <= matcher.tolerance)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(
            _equal(left, right, matcher) for left, right in zip(want, got, strict=True)
        )
    if isinstance(want, dict) and isinstance(got, dict):
        return set(want) == set(got) and all(_equal(want[k], got[k], matcher) for k in want)
    return same_value(want, got)


def _arrays(want: Sequence[Any], got: Sequence[Any], matcher: ArgumentMatcher) -> bool:
    """Multiset comparison: each element of one side used at most once on the other."""
    unused = list(range(len(want)))
    unmatched_got = 0
    for item in got:
        index = next((i for i in unused if _equal(want[i], item, matcher)), None)
        if index is None:
            unmatched_got += 1
        else:
            unused.remove(index)
    if matcher.array == "set":
        return not unmatched_got and not unused
    if matcher.array == "subset":
        return not unmatched_got
    return not unused  # contains: every listed element is there


def _normal(text: str, matcher: ArgumentMatcher) -> str:
    if matcher.normalized == "bfcl":
        return standardize(text)
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _PUNCTUATION_OR_SPACE.sub(" ", folded).strip()


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
