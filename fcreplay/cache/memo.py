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
    """Per target name and for the schema diff: (key, JSON value), the value as read, or
    as its JSON bytes when made by this run (written as they are)."""

    targets: dict[str, tuple[str, Any]] = field(default_factory=dict)
    schema: tuple[str, Any] | None = None

    def target(self, name: str, key: str) -> Any:
        """The fold kept for target `name` under `key`, or None."""
        kept = self.targets.get(name)
        return _value(kept[1]) if kept is not None and kept[0] == key else None

    def schema_result(self, key: str) -> Any:
        """The schema-diff result kept under `key`, or None."""
        kept = self.schema
        return _value(kept[1]) if kept is not None and kept[0] == key else None


def _value(kept: Any) -> Any:
    return json.loads(kept) if isinstance(kept, bytes) else kept


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
    """Write the memo whole (the values this run made as their bytes are, not encoded again)."""
    head = json.dumps({"format": FORMAT, "fcreplay": __version__}, separators=(",", ":"))
    targets = b",".join(_encoded(name) + b":" + _pair(kept) for name, kept in memo.targets.items())
    schema = b"null" if memo.schema is None else _pair(memo.schema)
    document = [head.encode()[:-1], b',"targets":{', targets, b'},"schema":', schema, b"}"]
    write_bytes_atomically(path, b"".join(document))


def _pair(kept: tuple[str, Any]) -> bytes:
    key, value = kept
    return (
        b"["
        + _encoded(key)
        + b","
        + (value if isinstance(value, bytes) else _encoded(value))
        + b"]"
    )


def _encoded(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def key_of(parts: Iterable[bytes | str]) -> str:
    """A key over `parts`, each told apart from the next."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()
