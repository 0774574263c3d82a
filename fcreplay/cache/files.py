"""Writing cache files whole: a temp file renamed over the old one.

A crash leaves the old file or a damaged one, which the reader detects and ignores:
the cache is never synced, it is disposable.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from fcreplay.atomic import write_atomically


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, so that a reader sees the old bytes or the new."""
    write_pieces_atomically(path, [data])


def write_pieces_atomically(path: Path, pieces: Iterable[bytes | memoryview]) -> None:
    """Replace `path` with `pieces` back to back (never joined in memory), atomically."""
    write_atomically(path, lambda handle: handle.writelines(pieces), sync=False)
