"""A replay's blocks of log lines written in plan order, so that its log needs no reordering.

Worker processes send their chunks back as they finish them, a little out of plan
order; a block that comes before its turn waits for those before it (held only so
long: past `_WAITING_BYTES` every block is written as it comes, and the finished log
is reordered by `runlog.rewrite_in_order` instead).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from fcreplay.record import AttemptKey
from fcreplay.runlog import RunLogWriter

_WAITING_BYTES = 8 << 20
"""The most of the log held back, waiting for the blocks before it."""


class OrderedBlocks:
    """Writes blocks of lines (`RunLogWriter.append_block`) in the order of `order`."""

    def __init__(self, writer: RunLogWriter, order: Iterable[AttemptKey]) -> None:
        self._writer = writer
        # Followed as blocks are written, not indexed: an index of every attempt's place
        # would hold a large run's keys twice over (the writer keeps its spans).
        self._order: Iterator[AttemptKey] = iter(order)
        self._next: AttemptKey | None = next(self._order, None)
        """The attempt whose line is to be written next."""
        self._waiting: dict[AttemptKey, tuple[list[AttemptKey], list[int], bytes]] = {}
        """Blocks that came before their turn, by their first attempt."""
        self._bytes = 0
        self._ordered = True

    def add(self, keys: list[AttemptKey], sizes: list[int], block: bytes) -> None:
        """Write the block now when it is next, else when those before it are written."""
        if not self._ordered or not keys:
            self._writer.append_block(keys, sizes, block)
            return
        self._waiting[keys[0]] = (keys, sizes, block)
        self._bytes += len(block)
        while self._next is not None and self._next in self._waiting:
            keys, sizes, block = self._waiting.pop(self._next)
            self._bytes -= len(block)
            self._writer.append_block(keys, sizes, block)
            for key in keys:
                if key != self._next:
                    self._ordered = False  # not the order's: written as they come from now
                self._next = next(self._order, None)
            if not self._ordered:
                break
        if self._bytes > _WAITING_BYTES or not self._ordered:
            self.flush()

    def flush(self) -> None:
        """Write every block still waiting (gaps left: the log is reordered when it ends)."""
        for waiting in self._waiting.values():
            self._writer.append_block(*waiting)
        if self._waiting:
            self._ordered = False
        self._waiting.clear()
        self._bytes = 0
