"""Keeping reads and writes inside the suite's folders, whatever symlinks or names say."""

from __future__ import annotations

from pathlib import Path

from fcreplay.errors import InputError


def confined(path: Path, folder: Path) -> Path:
    """`path`, after checking that it stays inside `folder` once symlinks are followed.

    A committed symlink under cassettes/, golden/ or runs/ that points elsewhere
    would make fcreplay read or overwrite a file outside the project; one that stays
    inside the folder is fine.
    """
    inside = folder.resolve()
    where = path.resolve()
    if where != inside and inside not in where.parents:
        raise InputError.at(
            path,
            None,
            f"leads outside {folder} (to {where}) through a symlink or '..'; fcreplay reads "
            "and writes only inside the suite's folders: replace the link with a real file",
        )
    return path
