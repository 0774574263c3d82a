"""Reading a cassette file whole, refusing one larger than the size limit before parsing."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from stat import S_ISREG

from fcreplay.errors import InputError


def read_capped(
    path: str | Path,
    limit: int,
    *,
    missing_ok: bool = False,
    on_link: Callable[[], object] | None = None,
) -> bytes | None:
    """The file's bytes; None when it is missing and `missing_ok`, else an InputError (as
    when it is larger than `limit`).

    With `on_link`, the file is opened only if it is no symlink (one system call where
    a look first takes two); when it is one, `on_link()` is called (to check where it
    leads: it raises to refuse it) and the file is then read through the link.
    """
    flags = os.O_RDONLY | _BINARY | (_NO_LINKS if on_link is not None else 0)
    try:
        # A bare descriptor (no buffered reader, nor its terminal check); asking for
        # `limit + 1` bytes would allocate that much for every file.
        descriptor = os.open(path, flags)
        try:
            stat = os.fstat(descriptor)
            asked = min(stat.st_size, limit) + 1
            raw = os.read(descriptor, asked)
            # A short read of a regular file is its end; anything else (a file growing
            # while read, a pipe) is read to its end, or the limit.
            if len(raw) == asked or not S_ISREG(stat.st_mode):
                while len(raw) <= limit and (more := os.read(descriptor, 1 << 16)):
                    raw += more
        finally:
            os.close(descriptor)
    except OSError as exc:
        if on_link is not None and exc.errno == errno.ELOOP:
            on_link()  # a symlink (or a loop of them on the way): looked at, then read
            return read_capped(path, limit, missing_ok=missing_ok)
        if missing_ok and exc.errno in _MISSING:
            return None
        raise InputError.at(path, None, f"cannot read cassette: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise InputError.at(
            path,
            None,
            f"cassette larger than {limit} bytes (the max_cassette_bytes limit); split it "
            "or raise max_cassette_bytes in the suite configuration if it is trusted",
        )
    return raw


NO_LINKS = hasattr(os, "O_NOFOLLOW")
"""Whether `read_capped` can refuse a symlink as it opens (`on_link`); else it follows one."""
_NO_LINKS = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EBADF})  # as Path.exists
