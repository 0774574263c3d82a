"""Reading a cassette file whole, refusing one larger than the size limit before parsing."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from fcreplay.errors import InputError


def read_capped(path: str | Path, limit: int, *, missing_ok: bool = False) -> bytes | None:
    """The file's bytes; None when it is missing and `missing_ok`, else an InputError (as
    when it is larger than `limit`)."""
    try:
        # A bare descriptor (no buffered reader, nor its terminal check); asking for
        # `limit + 1` bytes would allocate that much for every file.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            raw = os.read(descriptor, min(os.fstat(descriptor).st_size, limit) + 1)
            while len(raw) <= limit and (more := os.read(descriptor, 1 << 16)):
                raw += more  # a file growing while read is read to its end (or the limit)
        finally:
            os.close(descriptor)
    except OSError as exc:
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


_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EBADF})  # as Path.exists
