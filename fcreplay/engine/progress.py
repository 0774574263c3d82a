"""Progress of a run on stderr: one updating line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from fcreplay.record import AttemptRecord


class Progress:
    """Counts finished attempts; safe to call from worker threads."""

    def __init__(self, total: int, *, stream: TextIO | None = None, label: str = "") -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.errors = 0
        self._stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())
        self._label = label
        self._lock = threading.Lock()
        self._last_plain = 0.0
        self._started = time.monotonic()

    def note(self, message: str) -> None:
        """Print a message on its own line without breaking the progress line."""
        with self._lock:
            prefix = "\r\033[K" if self._tty else ""
            self._stream.write(f"{prefix}{message}\n")
            self._stream.flush()

    def advance(self, record: AttemptRecord) -> None:
        """Count one finished attempt."""
        self.advance_by(record.verdict, record.unit, record.attempt)

    def advance_by(self, verdict: str, unit: str, attempt: int) -> None:
        """Count one finished attempt, known by its verdict, unit label and number."""
        self.advance_many([(verdict, unit, attempt)])

    def advance_many(self, seen: Sequence[tuple[str, str, int]]) -> None:
        """Count finished attempts, each known by its verdict, unit label and number (a
        worker's chunk): a terminal's line is redrawn once, for the last of them."""
        if not seen:
            return
        with self._lock:
            if self._tty:
                for verdict, _, _ in seen:
                    self.failed += verdict == "fail"
                    self.errors += verdict == "error"
                self.done += len(seen)
                self._stream.write(f"\r\033[K{self._line(seen[-1], time.monotonic())}")
                self._stream.flush()
                return
            for item in seen:
                verdict = item[0]
                self.done += 1
                self.failed += verdict == "fail"
                self.errors += verdict == "error"
                now = time.monotonic()
                if self.done == self.total or now - self._last_plain >= 2.0:
                    # Plain logs get a line every couple of seconds, not one per attempt.
                    self._last_plain = now
                    self._stream.write(self._line(item, now) + "\n")
                    self._stream.flush()

    def _line(self, seen: tuple[str, str, int], now: float) -> str:
        _, unit, attempt = seen
        return (
            f"{self._label}[{self.done}/{self.total}] {self.failed} with findings, "
            f"{self.errors} errors  {self._pace(now)}  {unit} #{attempt}"
        )

    def _pace(self, now: float) -> str:
        """Elapsed time, attempts per second, and the time left at that rate."""
        elapsed = now - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else None
        eta = "?" if left is None else _duration(left)
        return f"{_duration(elapsed)} elapsed, {rate:.1f}/s, ETA {eta}"

    def finish(self) -> None:
        """End the progress line."""
        with self._lock:
            if self._tty and self.done:
                self._stream.write("\n")
                self._stream.flush()


def _duration(seconds: float) -> str:
    """`4.2 s`, `3 min 05 s`, `1 h 02 min`."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
