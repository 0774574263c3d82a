"""What the proxy tells: one line per exchange, and one run-log record per model exchange."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from fcreplay.cassettes.interactions import Interaction, RecordedResponse
from fcreplay.proxy.judging import judge_exchange
from fcreplay.proxy.service import Outcome
from fcreplay.record import AttemptRecord
from fcreplay.runlog import RunLogWriter

HOWS = ("recorded", "replayed", "miss", "error")


class ProxyJournal:
    """Prints and logs finished requests; thread-safe (one lock around the log and counts)."""

    def __init__(
        self,
        run_id: str,
        target: str,
        echo: Callable[[str], None] | None,
        writer: RunLogWriter | None,
    ) -> None:
        self.run_id = run_id
        self.target = target
        self._echo = echo
        self._writer = writer
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self._ordinals: Counter[str] = Counter()
        self.records: list[AttemptRecord] = []
        """Every record written, in completion order."""

    @property
    def log_path(self) -> str | None:
        """Where the run log is written, if anywhere."""
        return None if self._writer is None else str(self._writer.path)

    def note(self, outcome: Outcome) -> None:
        """Count, print and log one finished request."""
        with self._lock:
            self.counts[outcome.how] += 1
            record = self._record(outcome)
            if record is not None:
                self.records.append(record)
                if self._writer is not None:
                    self._writer.append(record)
            if self._echo is not None:
                self._echo(_line(outcome, record))

    def _record(self, outcome: Outcome) -> AttemptRecord | None:
        adapter = outcome.destination.adapter
        if adapter is None or (outcome.how == "error" and outcome.response is None):
            return None
        self._ordinals[outcome.cassette.name] += 1
        response = outcome.response or RecordedResponse(0, {}, None)
        return judge_exchange(
            Interaction(outcome.request, response),
            adapter,
            run_id=self.run_id,
            target=self.target,
            case_id=outcome.cassette.name,
            ordinal=self._ordinals[outcome.cassette.name],
            elapsed_ms=outcome.elapsed_ms,
            miss=outcome.message if outcome.how == "miss" else None,
        )

    def summary(self) -> str:
        """`3 recorded, 0 replayed, 1 miss, 0 error; run log runs/....jsonl`."""
        counts = ", ".join(f"{self.counts[how]} {how}" for how in HOWS)
        where = f"; run log {self.log_path}" if self.log_path else ""
        return counts + where

    def close(self) -> None:
        """Close the run log."""
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None


def _line(outcome: Outcome, record: AttemptRecord | None) -> str:
    path = outcome.destination.path.split("?", 1)[0]
    status = f" {outcome.response.status}" if outcome.response is not None else ""
    head = f"{outcome.how} {outcome.cassette.name}: {outcome.request.method} {path}{status}"
    if outcome.message is not None:
        return f"{head}: {outcome.message}"
    if record is not None and record.steps:
        decision = record.steps[0].decision
        calls = ", ".join(call.name for call in decision.calls)
        return f"{head} {decision.kind}{f' {calls}' if calls else ''} ({outcome.elapsed_ms} ms)"
    return f"{head} ({outcome.elapsed_ms} ms)"
