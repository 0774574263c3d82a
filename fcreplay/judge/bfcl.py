"""The `bfcl` rule set: the Berkeley Function Calling Leaderboard's AST-checker semantics.

An expectation with `"rules": "bfcl"` gives, per parameter, BFCL's list of possible
answers (`{"unit": ["cm", ""]}`); `""` in the list means the parameter may be omitted.
A call passes when, as in BFCL's `ast_checker` (bfcl-eval, Apache-2.0, reimplemented
here from its documented behaviour, Python categories):

* every parameter sent is declared and has possible answers;
* its value has the declared type (read from the tool's JSON Schema: `integer` is int,
  `number` is float, `string` str, `boolean` bool, `array` list, `object` dict), where an
  int is accepted for a float and not the reverse, and a value of the possible answers'
  own type is accepted too (BFCL's "variable" answers, e.g. null or a string for a
  number); arrays also check their items' type one level deep;
* strings are compared after BFCL's standardisation (spaces and `,./-_*^` removed,
  lower case, `'` as `"`), as are the strings inside lists and the values of dicts;
  dicts compare key by key against each possible dict (a key may be omitted where its
  answers hold `""`), lists of dicts element by element in order; other values must
  equal one possible answer (Python equality, so `1` equals `1.0`);
* every parameter not sent has `""` among its possible answers.

Which calls are paired with which answers (BFCL's order rules for the parallel and
multiple categories) is `pair_in_order`: each expected call in order takes the first
unused call, in the model's order, that passes. Required parameters are left to the
JSON Schema check, which BFCL's required check matches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fcreplay.canonical import canonical_json
from fcreplay.judge.mismatch import ArgumentMismatch
from fcreplay.sources import pointer

RULES = "bfcl"
MAY_OMIT = ""
"""BFCL's marker, among a parameter's possible answers, for "may be omitted"."""

_JSON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}
_STANDARDIZE = re.compile(r"[ ,./\-_*^]")


def standardize(text: str) -> str:
    """BFCL's string standardisation: drop spaces and `,./-_*^`, lower case, `'` as `"`."""
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


@dataclass(frozen=True)
class _Declared:
    """A parameter's declared Python type and, for arrays, its items' type."""

    kind: type | None
    items: type | None


def bfcl_differences(
    parameters: Mapping[str, Any], answers: Mapping[str, Any], got: Mapping[str, Any]
) -> list[ArgumentMismatch]:
    """Every parameter of `got` that BFCL's checker rejects against `answers`."""
    properties = parameters.get("properties", {}) if isinstance(parameters, Mapping) else {}
    found: list[ArgumentMismatch] = []

    def fail(name: str, expected: Any, actual: Any, message: str) -> None:
        found.append(
            ArgumentMismatch(pointer(name), expected, actual, f"{message} (matcher: bfcl)", RULES)
        )

    for name in sorted(got):
        value = got[name]
        possible = answers.get(name)
        if name not in properties or not isinstance(possible, list):
            fail(name, None, value, "unexpected parameter: the case lists no answers for it")
            continue
        problem = _parameter_problem(_declared(properties[name]), value, possible)
        if problem:
            fail(name, possible, value, problem)
    for name in sorted(answers):
        possible = answers[name]
        if name not in got and not (isinstance(possible, list) and MAY_OMIT in possible):
            fail(name, possible, None, "missing, and its answers do not allow omitting it")
    return found


def pair_in_order(
    expected: int, actual: int, passes: Callable[[int, int], bool]
) -> list[tuple[int, int]]:
    """BFCL's matching: each expected call in order takes the first free passing call.

    Stops at the first expected call that finds none (BFCL fails the entry there);
    returns the (actual, expected) pairs made so far.
    """
    pairs: list[tuple[int, int]] = []
    used: set[int] = set()
    for col in range(expected):
        row = next((r for r in range(actual) if r not in used and passes(r, col)), None)
        if row is None:
            break
        used.add(row)
        pairs.append((row, col))
    return pairs


def _declared(schema: Any) -> _Declared:
    if not isinstance(schema, Mapping):
        return _Declared(str, None)
    kind = _first_type(schema)
    items = schema.get("items")
    nested = _first_type(items) if kind is list and isinstance(items, Mapping) else None
    return _Declared(kind, nested)


def _first_type(schema: Mapping[str, Any]) -> type | None:
    declared = schema.get("type", "string")  # BFCL sends an untyped parameter as a string
    if isinstance(declared, list):
        declared = next((t for t in declared if t != "null"), declared[0] if declared else None)
    return _JSON_TYPES.get(declared) if isinstance(declared, str) else None


def _parameter_problem(declared: _Declared, value: Any, possible: list[Any]) -> str | None:
    """Why BFCL rejects `value` for a parameter with these answers, or None."""
    if declared.kind is float and type(value) is int:
        value = float(value)  # BFCL accepts an int where a float is declared
    accepted, variable = _type_accepts(value, possible, declared.kind, declared.items)
    if not accepted:
        shown = declared.kind.__name__ if declared.kind is not None else "?"
        return f"type {type(value).__name__} where {shown} is declared"
    if variable:
        ok = _contains(possible, value)
    elif declared.kind is dict:
        ok = isinstance(value, dict) and _dict_matches(value, possible)
    elif declared.kind is list and declared.items is dict:
        ok = isinstance(value, list) and _dict_list_matches(value, possible)
    elif declared.kind is str:
        ok = standardize(value) in [standardize(a) for a in possible if type(a) is str]
    elif declared.kind is list:
        ok = _standard_list(value) in [_standard_list(a) for a in possible if _listlike(a)]
    else:
        ok = _contains(possible, value)
    if ok:
        return None
    shown = ", ".join(canonical_json(a) for a in possible if a != MAY_OMIT) or "(omitted)"
    return f"expected one of {shown} (strings standardised), got {canonical_json(value)}"


def _answer_type(possible: Sequence[Any]) -> type | None:
    """The type of the first possible answer that is not the may-omit marker."""
    return next((type(a) for a in possible if not (type(a) is str and a == MAY_OMIT)), None)


def _type_accepts(
    value: Any, possible: Sequence[Any], expected: type | None, items: type | None
) -> tuple[bool, bool]:
    """(type accepted, value is a "variable"): BFCL's type check, one level deep."""
    answer_type = _answer_type(possible)
    variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if items is None or not isinstance(value, list):
            return True, variable
        for answer in possible:
            if type(answer) is not list or all(
                _type_accepts(item, answer, items, None)[0] for item in value
            ):
                return True, variable
        return False, variable
    if answer_type is not None and type(value) is answer_type:
        return True, True
    return False, False


def _contains(possible: Sequence[Any], value: Any) -> bool:
    # Python equality on purpose: BFCL's `in` takes 1 == 1.0 == True.
    return any(_python_equal(answer, value) for answer in possible)


def _python_equal(left: Any, right: Any) -> bool:
    try:
        return bool(left == right)
    except (TypeError, ValueError):
        return False


def _listlike(value: Any) -> bool:
    return isinstance(value, list | str)


def _standard_list(values: list[Any] | str) -> list[Any]:
    """A list with its string elements standardised (a string answer reads as its letters)."""
    return [standardize(v) if type(v) is str else v for v in values]


def _dict_matches(value: Mapping[str, Any], possible: Sequence[Any]) -> bool:
    for answer in possible:
        if answer == MAY_OMIT or not isinstance(answer, Mapping):
            continue
        if all(_dict_value_matches(answer, key, item) for key, item in value.items()) and all(
            key in value or (isinstance(alts, list) and MAY_OMIT in alts)
            for key, alts in answer.items()
        ):
            return True
    return False


def _dict_value_matches(answer: Mapping[str, Any], key: str, item: Any) -> bool:
    alternatives = answer.get(key)
    if key not in answer or not isinstance(alternatives, list):
        return False
    mine = standardize(item) if type(item) is str else item
    return _contains([standardize(a) if type(a) is str else a for a in alternatives], mine)


def _dict_list_matches(value: Sequence[Any], possible: Sequence[Any]) -> bool:
    for answer in possible:
        if not _listlike(answer) or len(value) != len(answer):
            continue
        if all(
            isinstance(item, Mapping) and _dict_matches(item, [wanted])
            for item, wanted in zip(value, answer, strict=True)
        ):
            return True
    return False
