"""A target's replayed lines set aside until its pack is written: held, or in a file."""

from __future__ import annotations

import tempfile
from bisect import bisect_right
from pathlib import Path
from typing import BinaryIO

from fcreplay.cache.pieces import Aside, InBlock, Piece

HELD_BYTES = 6 << 20
"""The most lines the targets in progress hold where their blocks are, all together: past
it they go to files (a block is held while a line in it is; at 10k exchanges a target's
lines are 1.7 MiB, at 100k 17 MiB)."""


class SetAside:
    """One target's replayed lines as they came, at offsets from 0 (`end`: the next one's):
    where the blocks are while the targets in progress hold few, in a file without a name
    in the cache folder once they hold many (the page cache holds them then, not the
    parent's heap), until its pack is written."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._file: BinaryIO | None = None
        """The file they are in once they went there (None: held)."""
        self._stretches: list[tuple[bytes, int, int]] = []
        """Held: each stretch's block, and its start and end there."""
        self._starts: list[int] = []
        self.end = 0

    @property
    def held(self) -> int:
        """The bytes held where their blocks are."""
        return self.end if self._file is None else 0

    def add(self, data: bytes, start: int, end: int) -> None:
        if self._file is None:
            self._starts.append(self.end)
            self._stretches.append((data, start, end))
        else:
            self._file.write(memoryview(data)[start:end])
        self.end += end - start

    def spill(self) -> None:
        """Move the lines held to a file of their own (and the lines to come)."""
        if self._file is not None:
            return
        # Closed when the pack is written (`close`), not at the end of a block.
        self._file = tempfile.TemporaryFile(dir=self._folder)  # noqa: SIM115
        self._file.writelines(memoryview(data)[start:end] for data, start, end in self._stretches)
        self._stretches.clear()
        self._starts.clear()

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def piece(self, start: int, length: int) -> Piece:
        """The bytes at `start`: where they are held, or where the file has them."""
        if self._file is not None:
            return Aside(self._file.fileno(), start, length)
        at = bisect_right(self._starts, start) - 1
        data, begin, end = self._stretches[at]
        begin += start - self._starts[at]
        if begin + length <= end:
            return InBlock(data, begin, length)  # the usual case: in one block's stretch
        found = [data[begin:end]]
        size = len(found[0])
        while size < length:
            at += 1
            data, begin, end = self._stretches[at]
            found.append(data[begin : min(end, begin + length - size)])
            size += len(found[-1])
        return b"".join(found)

    def read(self, start: int, length: int) -> bytes:
        piece = self.piece(start, length)
        if isinstance(piece, Aside):
            return piece.read()
        return bytes(piece.view()) if isinstance(piece, InBlock) else bytes(piece)

    def close(self) -> None:
        self._stretches.clear()
        self._starts.clear()
        if self._file is not None:
            self._file.close()
            self._file = None
