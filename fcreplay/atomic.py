"""Writing files so that nothing is ever half-written: temp file, sync, rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write a file so that a reader never sees it half-written, creating parent folders.

    The text goes to a temporary file in the same folder, is synced, then renamed
    over the target; on failure the old file (if any) is left as it was. The file
    gets the permissions a plain `open()` would give it (the temporary file is
    created private).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        os.fchmod(descriptor, 0o666 & ~_UMASK)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _read_umask() -> int:
    # os.umask can only be read by setting it; done once, at import, before any
    # worker thread exists, since the setting is process-wide.
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _sync_folder(folder: Path) -> None:
    # Makes the rename itself durable; not possible on every platform.
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
