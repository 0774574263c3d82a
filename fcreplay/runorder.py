"""A replay's blocks of log lines written in plan order, so that its log needs no reordering.

Worker processes send their chunks back as they finish them, a little out of plan
order; a block that comes before its turn waits for those before it (held only so
long: past `_WAITING_BYTES` every block is written as it comes, and the finished log
is reordered by `runlog.rewrite_in_order` instead).
"""

from __future__ import annotations

from collections.abc import Iterable

from fcreplay.record import AttemptKey
from fcreplay.runlog import RunLogWriter

_WAITING_BYTES = 8 << 20
"""The most of the log held back, waiting for the blocks before it."""


class OrderedBlocks:
    """Writes blocks of lines (`RunLogWriter.append_block`) in the order of `order`."""

    def __init__(self, writer: RunLogWriter, order: Iterable[AttemptKey]) -> None:
        self._writer = writer
        self._order: Iterable[AttemptKey] | None = order
        self._position: dict[AttemptKey, int] = {}
        """Each attempt's place in `order`; made from it with the first block (a run with
        no worker process has none)."""
        self._next = 0
        """The position of the attempt whose line is to be written next."""
        self._waiting: dict[int, tuple[list[AttemptKey], list[int], bytes]] = {}
        self._bytes = 0
        self._ordered = True

    def add(self, keys: list[AttemptKey], sizes: list[int], block: bytes) -> None:
        """Write the block now when it is next, else when those before it are written."""
        if self._order is not None:
            self._position = {key: index for index, key in enumerate(self._order)}
            self._order = None
        at = self._position.get(keys[0]) if keys and self._ordered else None
        if at is None or at < self._next:
            self._writer.append_block(keys, sizes, block)  # not one this order expects
            return
        self._waiting[at] = (keys, sizes, block)
        self._bytes += len(block)
        while self._next in self._waiting:
            keys, sizes, block = self._waiting.pop(self._next)
            self._bytes -= len(block)
            self._writer.append_block(keys, sizes, block)
            self._next += len(keys)
        if self._bytes > _WAITING_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write every block still waiting (gaps left: the log is reordered when it ends)."""
        for at in sorted(self._waiting):
            self._writer.append_block(*self._waiting[at])
        if self._waiting:
            self._ordered = False
        self._waiting.clear()
        self._bytes = 0
