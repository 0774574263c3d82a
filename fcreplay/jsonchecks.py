"""What makes parsed JSON unusable (deep nesting, non-finite numbers, wide integers), and where.

Pure Python, for `strictjson` (which parses with orjson) and for values read from
YAML: walks over a parsed value, the byte shapes in which a wide integer shows, and
the errors with the position of the offending text.
"""

from __future__ import annotations

import json
import re
from typing import Any


class JSONLimitError(json.JSONDecodeError):
    """Valid-looking JSON that fcreplay will not read: too deep, or a non-finite number."""


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_HUGE = re.compile(r"\d[eE]\+?0*[1-9]\d{2,}|\d{300,}")
"""Number text that may overflow to infinity: a three-digit exponent or 300 digits."""
_CONSTANT = re.compile(r"-?(?:NaN|Infinity)")


def check_value(value: Any, max_depth: int) -> str | None:
    """What makes a parsed value unusable: "deep", the text of a non-finite number, or None.

    One walk over the containers, cheaper than any scan of the text (which would
    have to skip strings); also used for values parsed from YAML.
    """
    stack = [(value, 1)]
    if type(value) is float and value - value != 0:
        return repr(value)
    while stack:
        item, depth = stack.pop()
        if type(item) is not dict and type(item) is not list:
            continue
        if depth > max_depth:
            return "deep"
        for child in item.values() if type(item) is dict else item:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
            elif kind is float and child - child != 0:  # infinity or NaN
                return repr(child)
    return None


DIGITS = (
    bytes(
        0x30 if chr(byte).isdigit() else 0x61 if chr(byte).isalpha() else 0x20
        for byte in range(128)
    )
    + b" " * 128
)
"""Every ASCII digit as `0`, every ASCII letter as `a`, any other byte as a space."""
_WIDE_DIGITS = b"0" * 19
"""The fewest digits an integer outside the 64-bit range is written with; a number
follows no letter, unlike digits in a hash."""


def wide_run(shapes: bytes) -> bool:
    """Whether `shapes` (a text translated by `DIGITS`) holds `_WIDE_DIGITS` after no
    letter: run by run, looking for the digits alone (a quicker search than with the
    space before them); a run after a letter is passed over."""
    at = shapes.find(_WIDE_DIGITS)
    while at >= 0:
        # The first match starts its run of digits: what comes before is no digit.
        if at == 0 or shapes[at - 1] == 0x20:
            return True
        end = at + len(_WIDE_DIGITS)
        while end < len(shapes) and shapes[end] == 0x30:
            end += 1
        at = shapes.find(_WIDE_DIGITS, end)
    return False


_WIDE = 2.0**63
"""orjson reads an integer outside the 64-bit range as a float, always at least this big."""


def parsed_problem(value: Any, max_depth: int) -> str | None:
    """`check_value` for orjson's values, which are finite: "deep", "wide" for a float
    as big as an integer orjson could not keep, or None. One level at a time, the
    cheapest walk in Python (cassettes hold thousands of containers)."""
    if type(value) is float and not -_WIDE < value < _WIDE:
        return "wide"
    if type(value) is not dict and type(value) is not list:
        return None
    level: list[Any] = [value]
    depth = 1
    while True:
        below: list[Any] = []
        push = below.append
        for item in level:
            for child in item.values() if type(item) is dict else item:
                kind = type(child)
                if kind is dict or kind is list:
                    push(child)
                elif kind is float and not -_WIDE < child < _WIDE:
                    return "wide"
        if not below:
            return None
        depth += 1
        if depth > max_depth:
            return "deep"
        level = below


def too_deep(text: str, max_depth: int) -> JSONLimitError:
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                return JSONLimitError(
                    f"nested deeper than {max_depth} levels (the max_json_depth limit)",
                    text,
                    match.start(),
                )
        elif token in ("]", "}"):
            depth -= 1
    return JSONLimitError(f"nested deeper than {max_depth} levels", text, 0)


class NonFinite(Exception):
    pass


def constant(name: str) -> float:
    raise NonFinite(name)


def not_finite(literal: str, text: str) -> JSONLimitError:
    match = _CONSTANT.search(_STRING.sub(_blank, text)) or _HUGE.search(text)
    return JSONLimitError(
        f"{literal} is not a finite number (JSON has no NaN or infinity)",
        text,
        match.start() if match else 0,
    )


def _blank(match: re.Match[str]) -> str:
    # Keeps every position in place while hiding string contents from the search.
    return '"' + " " * (len(match.group()) - 2) + '"'
