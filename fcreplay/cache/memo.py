"""The tail memo: each target's fold and the schema diff's result, by what they came from.

An unchanged target is not added up again, an unchanged set of requests not diffed again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcreplay.cache.files import write_bytes_atomically
from fcreplay.version import __version__

FORMAT = 1


@dataclass
class Memo:
    """Per target name and for the schema diff: (key, JSON value)."""

    targets: dict[str, tuple[str, Any]] = field(default_factory=dict)
    schema: tuple[str, Any] | None = None

    def target(self, name: str, key: str) -> Any:
        """The fold kept for target `name` under `key`, or None."""
        kept = self.targets.get(name)
        return kept[1] if kept is not None and kept[0] == key else None

    def schema_result(self, key: str) -> Any:
        """The schema-diff result kept under `key`, or None."""
        return self.schema[1] if self.schema is not None and self.schema[0] == key else None


def read_memo(path: Path) -> Memo:
    """The memo at `path`; an empty one when there is none or it is not one of ours."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return Memo()
    if not (isinstance(data, dict) and data.get("format") == FORMAT):
        return Memo()
    if data.get("fcreplay") != __version__:
        return Memo()
    memo = Memo()
    targets = data.get("targets")
    if isinstance(targets, dict):
        for name, kept in targets.items():
            if isinstance(kept, list) and len(kept) == 2 and isinstance(kept[0], str):
                memo.targets[name] = (kept[0], kept[1])
    schema = data.get("schema")
    if isinstance(schema, list) and len(schema) == 2 and isinstance(schema[0], str):
        memo.schema = (schema[0], schema[1])
    return memo


def write_memo(path: Path, memo: Memo) -> None:
    """Write the memo whole."""
    document = {
        "format": FORMAT,
        "fcreplay": __version__,
        "targets": {name: list(kept) for name, kept in memo.targets.items()},
        "schema": None if memo.schema is None else list(memo.schema),
    }
    write_bytes_atomically(path, json.dumps(document, separators=(",", ":")).encode())


def key_of(parts: Iterable[bytes | str]) -> str:
    """A key over `parts`, each told apart from the next."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()
