"""Argument matchers of the case format: how one expected argument is compared, by JSON pointer.

A call's `match` object maps JSON pointers into its `arguments` to a matcher. A
matcher is a name (`"normalized"`, `"optional"`, `"present"`, `"set"`, `"subset"`,
`"contains"`) or an object combining these keys:

* `any_of`: alternatives, any one of which passes (instead of a value in `arguments`);
* `optional`: the argument may be omitted; when present it is checked as otherwise said;
* `regex`: a string value that the Python regular expression matches as a whole;
* `normalized`: `"text"` (or true) compares strings after Unicode NFKC, case folding and
  collapsing punctuation and whitespace; `"bfcl"` uses BFCL's string standardisation;
* `tolerance`: numbers within this absolute distance are equal;
* `present`: any value passes, as long as the argument is there;
* `array`: `"set"` (same elements, any order), `"subset"` (only listed elements, each at
  most as often as listed), `"contains"` (every listed element, others allowed).

Everything without a matcher is compared exactly, as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Normalization = Literal["text", "bfcl"]
ArrayMode = Literal["set", "subset", "contains"]
RULE_SETS = ("exact", "bfcl")
"""Named rule sets an expectation's `rules` may choose; `exact` is the default."""

MATCHER_KEYS = ("any_of", "optional", "regex", "normalized", "tolerance", "present", "array")
SHORTHANDS: dict[str, dict[str, Any]] = {
    "normalized": {"normalized": "text"},
    "optional": {"optional": True},
    "present": {"present": True},
    "set": {"array": "set"},
    "subset": {"array": "subset"},
    "contains": {"array": "contains"},
}
"""Matcher names that stand for a one-key matcher object."""

_POINTER = re.compile(r"^(/([^~/]|~[01])*)+$")


class MatcherProblem(ValueError):
    """A `match` entry that cannot be used; the message says what to write instead."""


@dataclass(frozen=True)
class ArgumentMatcher:
    """How the argument at `pointer` is compared, instead of exact equality."""

    pointer: str
    any_of: tuple[Any, ...] | None = None
    """Alternatives; None takes the value at `pointer` in `arguments`, if any."""
    optional: bool = False
    regex: str | None = None
    normalized: Normalization | None = None
    tolerance: float | None = None
    present: bool = False
    array: ArrayMode | None = None

    @property
    def name(self) -> str:
        """The matcher as findings name it, e.g. `normalized` or `any_of+optional`."""
        parts = [
            "any_of" if self.any_of is not None else "",
            "optional" if self.optional else "",
            "regex" if self.regex is not None else "",
            ("normalized" if self.normalized == "text" else "normalized:bfcl")
            if self.normalized
            else "",
            "tolerance" if self.tolerance is not None else "",
            "present" if self.present else "",
            f"array:{self.array}" if self.array else "",
        ]
        return "+".join(part for part in parts if part)

    @property
    def has_value(self) -> bool:
        """Whether this matcher compares against values (rather than presence or a regex)."""
        return not self.present and self.regex is None


def parse_matchers(raw: Any, arguments: Mapping[str, Any] | None) -> tuple[ArgumentMatcher, ...]:
    """Read a call's `match` object; MatcherProblem says what is wrong with an entry."""
    if not isinstance(raw, dict) or not raw:
        raise MatcherProblem('"match" must be an object {"/pointer": matcher, ...}')
    if arguments is None:
        raise MatcherProblem('"match" needs "arguments" (use {} when every argument has one)')
    found = []
    for where, spec in raw.items():
        if not isinstance(where, str) or not _POINTER.match(where):
            raise MatcherProblem(
                f"match key {where!r} must be a JSON pointer into the arguments, e.g. /title"
            )
        found.append(_matcher(where, spec, arguments))
    return tuple(sorted(found, key=lambda m: m.pointer))


def pointer_parts(where: str) -> list[str]:
    """The unescaped reference tokens of a JSON pointer ("" is the whole document)."""
    return [part.replace("~1", "/").replace("~0", "~") for part in where.split("/")[1:]]


def value_at(document: Any, where: str) -> tuple[bool, Any]:
    """(found, value) at a JSON pointer; list indices are decimal tokens."""
    node = document
    for part in pointer_parts(where):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def _matcher(where: str, spec: Any, arguments: Mapping[str, Any]) -> ArgumentMatcher:
    label = f"match {where}"
    if isinstance(spec, str):
        if spec not in SHORTHANDS:
            raise MatcherProblem(
                f"{label}: unknown matcher {spec!r} (names: {', '.join(SHORTHANDS)}; "
                f"or an object with {', '.join(MATCHER_KEYS)})"
            )
        spec = SHORTHANDS[spec]
    if not isinstance(spec, dict) or not spec:
        raise MatcherProblem(
            f"{label}: a matcher is a name or an object of {', '.join(MATCHER_KEYS)}"
        )
    unknown = sorted(set(spec) - set(MATCHER_KEYS))
    if unknown:
        raise MatcherProblem(
            f"{label}: unknown key {unknown[0]!r} (allowed: {', '.join(MATCHER_KEYS)})"
        )
    parent = where.rsplit("/", 1)[0]
    has_parent, parent_value = value_at(arguments, parent) if parent else (True, arguments)
    if not has_parent or not isinstance(parent_value, dict | list):
        raise MatcherProblem(f"{label}: {parent or '/'} is not an object or array in the arguments")
    has_value, _ = value_at(arguments, where)
    values: dict[str, Any] = {"pointer": where}
    if "any_of" in spec:
        if not isinstance(spec["any_of"], list) or not spec["any_of"]:
            raise MatcherProblem(f"{label}: any_of must be a non-empty list of alternatives")
        if has_value:
            raise MatcherProblem(
                f"{label}: give the value either in arguments or in any_of, not both"
            )
        values["any_of"] = tuple(spec["any_of"])
    for key in ("optional", "present"):
        if key in spec:
            if not isinstance(spec[key], bool):
                raise MatcherProblem(f"{label}: {key} must be true or false")
            values[key] = spec[key]
    if "regex" in spec:
        if not isinstance(spec["regex"], str):
            raise MatcherProblem(f"{label}: regex must be a string")
        try:
            re.compile(spec["regex"])
        except re.error as exc:
            raise MatcherProblem(f"{label}: regex does not compile: {exc}") from None
        values["regex"] = spec["regex"]
    if "normalized" in spec:
        mode = {True: "text", "text": "text", "bfcl": "bfcl"}.get(spec["normalized"])
        if mode is None:
            raise MatcherProblem(f'{label}: normalized must be true, "text" or "bfcl"')
        values["normalized"] = mode
    if "tolerance" in spec:
        tolerance = spec["tolerance"]
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
            raise MatcherProblem(f"{label}: tolerance must be a number of at least 0")
        values["tolerance"] = float(tolerance)
    if "array" in spec:
        if spec["array"] not in ("set", "subset", "contains"):
            raise MatcherProblem(f'{label}: array must be "set", "subset" or "contains"')
        values["array"] = spec["array"]
    matcher = ArgumentMatcher(**values)
    if matcher.present and len(spec) > 1:
        raise MatcherProblem(f"{label}: present stands alone (any value passes)")
    if matcher.regex is not None and ({"any_of", "normalized", "tolerance", "array"} & set(spec)):
        raise MatcherProblem(f"{label}: regex combines only with optional")
    if matcher.regex is not None and has_value:
        raise MatcherProblem(f"{label}: with a regex, leave the value out of arguments")
    if not matcher.optional and matcher.has_value and matcher.any_of is None and not has_value:
        raise MatcherProblem(
            f"{label}: no expected value: put one in arguments, or use any_of, regex, "
            "present or optional"
        )
    return matcher
