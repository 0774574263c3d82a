"""The pieces a pack is written from: bytes, or where they are until written."""

from __future__ import annotations

import os
from dataclasses import dataclass

READ_BYTES = 1 << 20
"""The most of a cache or log file read at once while checking, counting or copying it."""


@dataclass(frozen=True)
class Aside:
    """Bytes written to a file of their own (`descriptor`), read only as the pack is written."""

    descriptor: int
    start: int
    length: int

    def read(self) -> bytes:
        """The bytes (OSError: not all there)."""
        data = os.pread(self.descriptor, self.length, self.start)
        while len(data) < self.length:
            more = os.pread(self.descriptor, self.length - len(data), self.start + len(data))
            if not more:
                raise OSError(f"{self.length - len(data)} bytes set aside are missing")
            data += more
        return data


@dataclass(frozen=True)
class InBlock:
    """Bytes of a block the parent holds (`data[start:start + length]`), not copied."""

    data: bytes
    start: int
    length: int

    def view(self) -> memoryview:
        return memoryview(self.data)[self.start : self.start + self.length]


Piece = bytes | memoryview | Aside | InBlock


def size_of(piece: Piece) -> int:
    return piece.length if isinstance(piece, Aside | InBlock) else len(piece)


def after(last: Piece, piece: Piece) -> Piece | None:
    """`last` and `piece` as one, when `piece` starts where `last` ends in the same bytes
    (a target's lines, in plan order, mostly lie so: a few stretches, not one per unit)."""
    if type(last) is InBlock and type(piece) is InBlock:
        if last.data is piece.data and last.start + last.length == piece.start:
            return InBlock(last.data, last.start, last.length + piece.length)
    elif type(last) is Aside and type(piece) is Aside:
        joined = last.length + piece.length
        if (
            last.descriptor == piece.descriptor
            and last.start + last.length == piece.start
            and joined <= READ_BYTES  # read whole (twice) when written
        ):
            return Aside(last.descriptor, last.start, joined)
    return None


def as_bytes(piece: Piece) -> bytes | memoryview:
    if isinstance(piece, Aside):
        return piece.read()
    return piece.view() if isinstance(piece, InBlock) else piece
