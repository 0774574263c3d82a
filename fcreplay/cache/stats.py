"""File content hashes without reading unchanged files: a stat index, as git keeps one.

A file is hashed again only when its size, modification time, change time or inode
differ from what the index holds. A file modified again within the clock tick of
the stat taken could keep all four (a coarse clock), so an entry is kept only for a
file last modified `_SETTLED` before the index is written; a younger one is hashed
again next time, which costs little and is never wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from stat import S_ISLNK, S_ISREG

from fcreplay.cache.files import write_bytes_atomically

FORMAT = 1
_SETTLED = 2_000_000_000
"""Nanoseconds a file must be older than the index for its entry to be trusted."""

ABSENT = "absent"
"""The hash of a file that is not there."""
LINKED = "linked"
"""The hash of a symbolic link: never taken from the cache, its target may move."""

Entry = tuple[int, int, int, int, str]
"""size, mtime_ns, ctime_ns, inode, sha256 hex"""


class StatIndex:
    """Content hashes of files by path, kept in `path` between runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, Entry] = {}
        self._changed = False
        self.hashed = 0
        """Files read and hashed by this index (the rest came from their stat)."""
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return  # no index yet, or a damaged one: everything is hashed again
        if isinstance(data, dict) and data.get("format") == FORMAT:
            entries = data.get("entries")
            if isinstance(entries, dict):
                # Checked inline: a cold check of 10k exchanges reads 3,400 entries.
                self._entries = {
                    name: (entry[0], entry[1], entry[2], entry[3], entry[4])
                    for name, entry in entries.items()
                    if type(entry) is list
                    and len(entry) == 5
                    and type(entry[0]) is int
                    and type(entry[1]) is int
                    and type(entry[2]) is int
                    and type(entry[3]) is int
                    and type(entry[4]) is str
                }

    def digest(self, path: str | Path) -> str:
        """The sha256 of the file at `path`, ABSENT or LINKED; read only when it changed."""
        name = str(path)
        try:
            found = os.lstat(name)
        except FileNotFoundError:
            return ABSENT
        except NotADirectoryError:
            return ABSENT
        if not S_ISREG(found.st_mode):
            return LINKED if S_ISLNK(found.st_mode) else ABSENT
        known = self._entries.get(name)
        now = (found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino)
        if known is not None and known[:4] == now:
            return known[4]
        try:
            value = _content_hash(name, found.st_size)
        except OSError:
            return ABSENT
        self.hashed += 1
        self._entries[name] = (*now, value)
        self._changed = True
        return value

    def save(self) -> None:
        """Write the index when it changed (entries of files too recent to trust left out)."""
        if not self._changed:
            return
        settled = time.time_ns() - _SETTLED
        entries = {name: list(entry) for name, entry in self._entries.items() if entry[1] < settled}
        document = {"format": FORMAT, "entries": entries}
        write_bytes_atomically(self.path, json.dumps(document, separators=(",", ":")).encode())
        self._changed = False


def _content_hash(name: str, size: int) -> str:
    # Plain descriptor reads: a cold check hashes every cassette, and a file object
    # per file cost as much as the hashing.
    digest = hashlib.sha256()
    descriptor = os.open(name, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        while block := os.read(descriptor, max(size, _BLOCK) + 1):
            digest.update(block)
    finally:
        os.close(descriptor)
    return digest.hexdigest()


_BLOCK = 1 << 16
