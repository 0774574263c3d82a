"""Keeping reads and writes inside the suite's folders, whatever symlinks or names say."""

from __future__ import annotations

from pathlib import Path

from fcreplay.errors import InputError


def confined(path: Path, folder: Path, resolved: dict[Path, Path] | None = None) -> Path:
    """`path`, after checking that it stays inside `folder` once symlinks are followed.

    A committed symlink under cassettes/, golden/ or runs/ that points elsewhere
    would make fcreplay read or overwrite a file outside the project; one that stays
    inside the folder is fine. `resolved` keeps, for one run, `folder` and the folders
    of the files checked so far that lie inside it, resolved: a run checks thousands of
    files in the same few folders.
    """
    inside = _resolve(folder, resolved)
    if resolved is None or path.name in ("", ".", "..") or path.is_symlink():
        # The file itself may be the link: only its folder is taken as resolved before.
        where = path.resolve()
    else:
        parent = path.parent
        if parent in resolved:
            return path
        where = parent.resolve()
        if where == inside or inside in where.parents:
            resolved[parent] = where
            return path
        where /= path.name
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
