"""Reading input files with errors that name the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import InputError


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


def parse_json(text: str, path: Path, line_offset: int = 0) -> Any:
    """Parse JSON text, turning a syntax error into FILE:LINE: message."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.at(
            path,
            exc.lineno + line_offset,
            f"not valid JSON: {exc.msg} (column {exc.colno})",
        ) from None


def load_json(path: Path) -> tuple[Any, str]:
    """Read and parse a JSON file; return the value and the text (for line lookups)."""
    text = read_text(path)
    return parse_json(text, path), text
