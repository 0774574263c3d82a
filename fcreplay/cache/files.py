"""Writing cache files whole: a temp file renamed over the old one.

A crash leaves the old file or a damaged one, which the reader detects and ignores:
the cache is never synced, it is disposable.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

_UMASK = os.umask(0)
os.umask(_UMASK)


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, so that a reader sees the old bytes or the new."""
    write_pieces_atomically(path, [data])


def write_pieces_atomically(path: Path, pieces: Iterable[bytes]) -> None:
    """Replace `path` with `pieces` back to back (never joined in memory), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Named as fcreplay.atomic names its temp files, so `atomic.sweep` can tell them.
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp"
    )
    try:
        os.fchmod(descriptor, 0o666 & ~_UMASK)
        with os.fdopen(descriptor, "wb") as handle:
            handle.writelines(pieces)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
