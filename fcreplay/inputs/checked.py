"""Suite files that passed the schema checks, remembered between checks.

Checking every tool's schema against the JSON Schema 2020-12 meta-schema, and every
case's expected arguments against its tool's schema, costs more than loading the rest
of a suite (and importing jsonschema, when a schema is not plain, costs more again);
`fcreplay check` with nothing changed needs neither. A contract is known good by the
sha256 of its text, a case file by its text and its contract's hash, under a stamp of
what judged them: fcreplay's version and checking code, Python's, and jsonschema's
installed files.
Only a clean result is remembered, so a file with problems is checked, and its
problems reported, every time.

The file lives in check's cache folder: disposable, JSON only, and a damaged or
foreign one is ignored.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

from fcreplay.version import __version__

FILE = "checked.json"
FORMAT = 1
_KEPT = 32
"""Inputs remembered (the newest), so switching between branches stays warm."""
_LIBRARIES = (
    "jsonschema",
    "jsonschema_specifications",
    "referencing",
    # What its format checker uses when installed (the meta-schema has formats).
    "fqdn",
    "idna",
    "rfc3987",
    "rfc3986_validator",
    "rfc3987_syntax",
    "rfc3339_validator",
    "webcolors",
    "jsonpointer",
    "uri_template",
    "isoduration",
)
_HERE = Path(__file__).resolve().parent
_CHECKING = (
    _HERE.parent / "judge" / "schema.py",
    _HERE.parent / "judge" / "plain_schema.py",
    _HERE.parent / "judge" / "plain_arguments.py",
    _HERE / "checked.py",
    _HERE / "contract.py",
    _HERE / "cases.py",
    _HERE / "matchers.py",
)
"""The fcreplay files whose code a remembered verdict depends on."""


class KnownGood:
    """What one cache folder knows passed the schema checks: contracts by their text,
    case files by theirs and their contract's hash."""

    def __init__(self, folder: Path, *, read: bool = True) -> None:
        self._path = folder / FILE
        self._stamp = _stamp()
        self._known: list[str] = _read(self._path, self._stamp) if read else []
        self._new: list[str] = []

    def known(self, *parts: str) -> bool:
        """Whether the input made of `parts` passed the checks with today's code."""
        return _digest(parts) in self._known

    def remember(self, *parts: str) -> None:
        """Note that the input made of `parts` passed (written by `save`)."""
        self._new.append(_digest(parts))

    def save(self) -> None:
        """Write what was remembered; a cache that cannot be written is left as it is (the
        checks run again next time)."""
        if not self._new:
            return
        kept = [d for d in self._known if d not in self._new]
        known = (kept + self._new)[-_KEPT:]
        document = {"format": FORMAT, "stamp": self._stamp, "known": known}
        data = json.dumps(document, separators=(",", ":")).encode()
        from fcreplay.atomic import write_atomically

        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self._path, lambda handle: handle.write(data), sync=False)
        except OSError:
            return
        self._known, self._new = known, []


def _read(path: Path, stamp: str) -> list[str]:
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return []  # none yet, or damaged: every contract is checked
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return []
    known = document.get("known")
    if document.get("stamp") != stamp or not isinstance(known, list):
        return []
    return [d for d in known if isinstance(d, str)]


def _digest(parts: tuple[str, ...]) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _stamp() -> str:
    parts = [__version__, sys.version, *(_file_stamp(path) for path in _CHECKING)]
    for name in _LIBRARIES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
        parts.append(f"{name} {_file_stamp(Path(origin)) if origin else 'none'}")
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _file_stamp(path: Path) -> str:
    """A file's identity by its stat: a new install or an edit rewrites it."""
    try:
        found = os.stat(path)
    except OSError:
        return f"{path} none"
    return f"{path} {found.st_size} {found.st_mtime_ns} {found.st_ino}"
