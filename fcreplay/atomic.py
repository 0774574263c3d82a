"""Writing files so that nothing is ever half-written: temp file, sync, rename; and groups.

A temporary file is named `.<name>.<pid>.<random>.tmp` beside its target, so the
temp files of a killed writer can be told from those of a live one and removed by
the next run (`sweep`). A group of files (the golden files of one update) is written
all or nothing: every temp file is synced, then a journal naming them is written (the
commit point), then each is renamed; a run that finds a journal finishes the renames.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

JOURNAL = ".fcreplay-commit.json"
"""The commit record of a group write, in the group's folder."""


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write a file so that a reader never sees it half-written, creating parent folders.

    The text goes to a temporary file in the same folder, is synced, then renamed
    over the target; on failure the old file (if any) is left as it was. The file
    gets the permissions a plain `open()` would give it (the temporary file is
    created private).
    """
    write_atomically(path, _text_writer(text))


def write_atomically(
    path: str | Path, write: Callable[[BinaryIO], object], *, sync: bool = True
) -> None:
    """`write_text_atomically` for a writer that streams its bytes into the file: what
    `write` writes into the handle it is given becomes the file's content. Without
    `sync` the file is still replaced whole, but a machine crash may lose it (for
    what is cheap to make again)."""
    path = Path(path)
    temporary = _write_temporary(path, write, sync=sync)
    try:
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if sync:
        _sync_folder(path.parent)


def write_group_atomically(folder: Path, files: Mapping[str, str]) -> None:
    """Write files under `folder` (relative path -> text) so that either all change or
    none does, even when the process is killed at any moment (see the module docstring)."""
    finish_group(folder)
    written: dict[str, Path] = {}
    try:
        for name, text in files.items():
            written[name] = _write_temporary(folder / name, _text_writer(text))
        # The temp file sits beside its target, so its path is the target's folder and name.
        journal = [
            [(Path(name).parent / temporary.name).as_posix(), name]
            for name, temporary in written.items()
        ]
        write_text_atomically(folder / JOURNAL, json.dumps(journal))
    except BaseException:
        for temporary in written.values():
            temporary.unlink(missing_ok=True)
        raise
    finish_group(folder)


def finish_group(folder: Path) -> None:
    """Complete a group write that a killed process committed but did not finish."""
    journal = folder / JOURNAL
    try:
        pairs = json.loads(journal.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for pair in pairs if isinstance(pairs, list) else []:
        if not (isinstance(pair, list) and len(pair) == 2 and all(map(_plain_name, pair))):
            continue  # only files inside this folder are ever renamed
        temporary, name = folder / pair[0], folder / pair[1]
        if temporary.exists():
            os.replace(temporary, name)
    _sync_folder(folder)
    journal.unlink(missing_ok=True)


def sweep(folder: Path) -> list[Path]:
    """Remove the temp files that killed writers left under `folder`; return them.

    A temp file whose writer is still running (another fcreplay at work) is kept.
    """
    if not folder.is_dir():
        return []
    finish_group(folder)
    removed = []
    for path in folder.rglob(".*.tmp"):
        pid = _writer_of(path.name)
        if pid is not None and not _alive(pid) and path.is_file():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _text_writer(text: str) -> Callable[[BinaryIO], object]:
    return lambda handle: handle.write(text.encode("utf-8"))


def _write_temporary(path: Path, write: Callable[[BinaryIO], object], *, sync: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp"
    )
    try:
        os.fchmod(descriptor, 0o666 & ~_UMASK)
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return Path(temporary)


def _plain_name(value: object) -> bool:
    # A relative path that stays in the folder: no absolute path, no `..`.
    return isinstance(value, str) and all(part not in ("", ".", "..") for part in value.split("/"))


def _writer_of(name: str) -> int | None:
    # `.<target name>.<pid>.<random>.tmp`: the pid is the second-to-last dotted part.
    parts = name.split(".")
    return int(parts[-3]) if len(parts) >= 5 and parts[-3].isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


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
