"""Reading input files, and the line of any JSON value in them, so errors say FILE:LINE."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.errors import InputError
from fcreplay.limits import DEFAULT_LIMITS

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The stdlib's string scanner: returns (decoded string, index after the closing quote).
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def pointer(*parts: str | int) -> str:
    """Build an RFC 6901 JSON pointer from path parts."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def value_lines(text: str) -> dict[str, int]:
    """Map the JSON pointer of every value in `text` to its 1-based line.

    Called only on the error path, so it favours being short over being fast.
    The text must already be known to be valid JSON.
    """
    lines: dict[str, int] = {}

    def skip(index: int) -> int:
        match = _WHITESPACE.match(text, index)
        return match.end() if match else index

    def parse(index: int, where: str) -> int:
        index = skip(index)
        lines[where] = text.count("\n", 0, index) + 1
        char = text[index]
        if char == "{":
            index = skip(index + 1)
            if text[index] == "}":
                return index + 1
            while True:
                key, index = scanstring(text, skip(index) + 1)
                index = skip(index) + 1  # the colon
                index = skip(parse(index, where + pointer(key)))
                if text[index] == "}":
                    return index + 1
                index += 1  # the comma
        if char == "[":
            index = skip(index + 1)
            if text[index] == "]":
                return index + 1
            position = 0
            while True:
                index = skip(parse(index, where + pointer(position)))
                position += 1
                if text[index] == "]":
                    return index + 1
                index += 1
        if char == '"':
            return scanstring(text, index + 1)[1]
        match = _SCALAR.match(text, index)
        if match is None:  # pragma: no cover - the text was valid JSON
            raise json.JSONDecodeError("unexpected value", text, index)
        return match.end()

    parse(0, "")
    return lines


def line_of(text: str, where: str) -> int | None:
    """Return the line of the value at JSON pointer `where`, or of its nearest parent."""
    lines = value_lines(text)
    while True:
        if where in lines:
            return lines[where]
        if not where:
            return None
        where = where.rsplit("/", 1)[0]


def read_text(path: Path) -> str:
    """Read a UTF-8 text file, or raise an InputError saying why it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError.at(path, None, "file not found") from None
    except IsADirectoryError:
        raise InputError.at(path, None, "is a directory, expected a file") from None
    except UnicodeDecodeError as exc:
        raise InputError.at(path, None, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise InputError.at(path, None, f"cannot read: {exc.strerror}") from None


def parse_json(
    text: str, path: Path, line_offset: int = 0, *, max_depth: int = DEFAULT_LIMITS.max_json_depth
) -> Any:
    """Parse JSON text, turning a syntax error, a non-finite number or nesting deeper than
    `max_depth` into FILE:LINE: message."""
    try:
        return strictjson.loads(text, max_depth=max_depth)
    except json.JSONDecodeError as exc:
        raise InputError.at(path, exc.lineno + line_offset, json_problem(exc)) from None


def json_problem(exc: json.JSONDecodeError) -> str:
    """What to tell the author of a file whose JSON `exc` rejects."""
    if isinstance(exc, strictjson.JSONLimitError):
        return (
            f"not usable JSON: {exc.msg} (column {exc.colno}); write plain finite numbers "
            "and flatter values"
        )
    return f"not valid JSON: {exc.msg} (column {exc.colno})"


def load_json(path: Path, *, max_depth: int = DEFAULT_LIMITS.max_json_depth) -> tuple[Any, str]:
    """Read and parse a JSON file; return the value and the text (for line lookups)."""
    text = read_text(path)
    return parse_json(text, path, max_depth=max_depth), text
