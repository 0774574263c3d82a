"""Keeping reads and writes inside the suite's folders, whatever symlinks or names say."""

from __future__ import annotations

from pathlib import Path

from fcreplay.errors import InputError


def confined(path: Path, folder: Path, resolved: dict[Path, Path] | None = None) -> Path:
    """`path`, after checking that it stays inside `folder` once symlinks are followed.

    A committed symlink under cassettes/, golden/ or runs/ that points elsewhere
    would make fcreplay read or overwrite a file outside the project; one that stays
    inside the folder is fine. `resolved` keeps the folders already resolved by one
    run, which checks thousands of files in the same few folders.
    """
    inside = _resolve(folder, resolved)
    where = path.resolve() if resolved is None else _resolve_file(path, resolved)
    if where != inside and inside not in where.parents:
        raise InputError.at(
            path,
            None,
            f"leads outside {folder} (to {where}) through a symlink or '..'; fcreplay reads "
            "and writes only inside the suite's folders: replace the link with a real file",
        )
    return path


def _resolve(folder: Path, resolved: dict[Path, Path] | None) -> Path:
    if resolved is None:
        return folder.resolve()
    where = resolved.get(folder)
    if where is None:
        where = resolved[folder] = folder.resolve()
    return where


def _resolve_file(path: Path, resolved: dict[Path, Path]) -> Path:
    # The file itself may be the link: only its folder is taken as resolved before.
    if path.name in ("", ".", "..") or path.is_symlink():
        return path.resolve()
    return _resolve(path.parent, resolved) / path.name
