"""The run log: one JSON line per attempt record, appended and fsynced as each attempt ends.

Its last line is a run-end record saying whether the run finished (and, when it
stopped early, why): a log without one was killed, or is still being written.
Commands that pick the newest run skip unfinished ones and say so.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import IO, BinaryIO

import fcreplay.strictjson as strictjson
from fcreplay.atomic import write_atomically
from fcreplay.cassettes.redaction import SecretGuard
from fcreplay.confine import confined
from fcreplay.errors import InputError
from fcreplay.names import RUN_ID, is_name
from fcreplay.record import AttemptKey, AttemptRecord, RecordShapeError
from fcreplay.runline import guarded_line
from fcreplay.runline import record_line as record_line
from fcreplay.runmarks import RUN_END_KEY, RUN_HEADER, RunEnd, RunHeader, run_end_line
from fcreplay.sources import json_problem

_TAIL_BYTES = 8192
"""How much of a log's end is read to find its run-end record (which is short)."""


def new_run_id(mode: str) -> str:
    """A sortable, unique run id: UTC time, the mode, and a random suffix."""
    now = datetime.now(UTC)
    stamp = now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}"
    return f"{stamp}Z-{mode}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class RunLogContents:
    """The complete records of a run log, and what was wrong with its tail, if anything."""

    records: tuple[AttemptRecord, ...]
    torn_line: int | None = None
    """Line number of an incomplete last line (a write cut short), which was ignored."""
    complete_bytes: int = 0
    """Length of the file up to the end of the last complete attempt record."""
    spans: tuple[tuple[int, int], ...] = ()
    """Byte range of each record's line, newline included, parallel to `records`."""
    header: RunHeader | None = None
    """The run header, when the log starts with one (record and replay write it)."""
    end: RunEnd | None = None
    """The run-end record; None when the run never wrote one (killed, or still running)."""

    @property
    def finished(self) -> bool:
        """Whether the run says it finished."""
        return self.end is not None and self.end.finished


def read_run_log(path: Path) -> RunLogContents:
    """Read every complete record; a torn last line is reported, not fatal.

    Any other line that is not an attempt record is an input error: the log was
    edited or damaged somewhere other than its tail.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError.at(path, None, "run log not found") from None
    *complete, tail = data.split(b"\n")
    records: list[AttemptRecord] = []
    spans: list[tuple[int, int]] = []
    header = None
    end: RunEnd | None = None
    start = 0
    for number, raw in enumerate(complete, start=1):
        line: object
        try:
            line = strictjson.loads(raw)
        except ValueError as exc:
            problem = json_problem(exc) if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise InputError.at(path, number, f"{problem}; the run log is damaged") from None
        if not isinstance(line, dict):
            raise InputError.at(path, number, "not a JSON object; the run log is damaged")
        if end is not None:
            raise InputError.at(
                path, number - 1, "a run-end record before the last line; the run log is damaged"
            )
        if number == 1 and RUN_HEADER in line:
            try:
                header = RunHeader.from_json(line)
            except RecordShapeError as exc:
                raise InputError.at(
                    path, number, f"not a run header: {exc}; the run log is damaged"
                ) from None
            start += len(raw) + 1
            continue
        try:
            if RUN_END_KEY in line:
                end = RunEnd.from_json(line)
            else:
                records.append(AttemptRecord.from_json(line))
                spans.append((start, start + len(raw) + 1))
        except RecordShapeError as exc:
            raise InputError.at(
                path, number, f"not an attempt record: {exc}; the run log is damaged"
            ) from None
        start += len(raw) + 1
    # Records always end with a newline, so anything after the last one is a torn write.
    return RunLogContents(
        tuple(records),
        torn_line=len(complete) + 1 if tail else None,
        complete_bytes=spans[-1][1] if spans else _header_bytes(data),
        spans=tuple(spans),
        header=header,
        end=end,
    )


def read_run_end(path: Path) -> RunEnd | None:
    """The run-end record of a log, reading only its end; None when it has none."""
    with path.open("rb") as stream:
        size = stream.seek(0, os.SEEK_END)
        stream.seek(max(0, size - _TAIL_BYTES))
        tail = stream.read()
    if not tail.endswith(b"\n"):
        return None
    last = tail[:-1].rsplit(b"\n", 1)[-1]
    if RUN_END_KEY.encode() not in last:
        return None
    try:
        line = json.loads(last)
        return RunEnd.from_json(line) if isinstance(line, dict) else None
    except (ValueError, RecordShapeError):
        return None  # a long record cut by the tail window, or damage: not a run end


class RunLogWriter:
    """Appends attempt records so that a killed process loses only the attempt in flight.

    `durable` also syncs each record to disk (survives a machine crash); recording
    wants it, since its attempts cost money and time, while a replay is cheap to run
    again and skips the sync.
    """

    def __init__(
        self,
        path: Path,
        *,
        truncate_to: int | None = None,
        durable: bool = True,
        spans: dict[AttemptKey, tuple[int, int]] | None = None,
        guard: SecretGuard | None = None,
    ) -> None:
        # Every line passes the secret guard, whichever command writes the log: the
        # run's credentials when the caller knows them, the key shapes always.
        self._guard = guard or SecretGuard()
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._durable = durable
        self._stream: IO[bytes] = path.open("ab")
        if truncate_to is not None:
            # A torn tail from an earlier crash: cut it so the next record starts clean.
            self._stream.truncate(truncate_to)
            self._stream.seek(truncate_to)
        self._end = self._stream.seek(0, os.SEEK_END)
        self.spans: dict[AttemptKey, tuple[int, int]] = dict(spans or {})
        """Where each record's line is, so the log can be reordered without parsing it."""

    def start(self, header: RunHeader) -> None:
        """Write the run header as the log's first line (a new log only)."""
        text = header.to_line()
        self._guard.check(text, where=f"run log {self.path}")
        self._stream.write(text.encode())
        self._end += len(text.encode())
        self._commit()

    def append(self, record: AttemptRecord) -> None:
        """Write one record and make it durable before returning."""
        self.append_line(record.key, record_line(record))

    def checked_line(self, record: AttemptRecord) -> str:
        """The record's line once the secret guard has passed it, for `append_line`
        with `checked` (replay workers make their records' lines themselves)."""
        text, suspect = guarded_line(record)
        if suspect or self._guard.values:
            self._guard.check(text, where=f"run log {self.path}")
        return text

    def append_line(self, key: AttemptKey, text: str, *, checked: bool = False) -> None:
        """Write one record already serialized by `record_line` (`checked`: and passed
        by this writer's guard, through `checked_line`)."""
        if not checked:
            self._guard.check(text, where=f"run log {self.path}")
        line = text.encode()
        self._stream.write(line)
        self.spans[key] = (self._end, self._end + len(line))
        self._end += len(line)
        self._commit()

    def _commit(self) -> None:
        self._stream.flush()  # a killed process keeps what was flushed
        if self._durable:  # a crashed machine keeps only what was synced
            os.fsync(self._stream.fileno())

    def append_block(self, keys: list[AttemptKey], sizes: list[int], block: bytes) -> None:
        """Write the lines of several records at once: `block` is their lines made by
        `checked_line`, joined, and `sizes` the length of each in bytes."""
        self._stream.write(block)
        for key, size in zip(keys, sizes, strict=True):
            self.spans[key] = (self._end, self._end + size)
            self._end += size
        self._commit()

    def append_known(self, lines: Sequence[tuple[AttemptKey, int]], data: bytes) -> None:
        """Write lines of earlier run logs (check's cache keeps them) in one write: each
        line's attempt and length, in order, and their bytes back to back.

        Each passed this guard's key-shape check when first written, by the same code
        (the cache is keyed by it), so only this run's credential values, which may be
        new, are looked for; a line holding one is refused as `append_line` would.
        """
        if sum(length for _, length in lines) != len(data):
            raise ValueError("the lengths of the known lines do not add up to their bytes")
        if any(value.encode() in data for value in self._guard.values):
            offset = 0
            for _, length in lines:
                line = data[offset : offset + length].decode()
                self._guard.check(line, where=f"run log {self.path}")
                offset += length
        for key, length in lines:
            self.spans[key] = (self._end, self._end + length)
            self._end += length
        self._stream.write(data)
        self._commit()

    def end(self, end: RunEnd) -> None:
        """Append the run-end record (last, once), durably: a run that stops early says
        so, a log written in one go says it finished."""
        self._stream.write(run_end_line(end).encode())
        self._stream.flush()
        os.fsync(self._stream.fileno())

    def close(self) -> None:
        """Close the file."""
        self._stream.close()

    def __enter__(self) -> RunLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rewrite_in_order(
    path: Path,
    spans: dict[AttemptKey, tuple[int, int]],
    order: Iterable[AttemptKey],
    end: RunEnd | None = None,
    *,
    durable: bool = True,
) -> None:
    """Rewrite a finished run log in plan order, atomically (temp file + rename),
    synced to disk when `durable` (as `RunLogWriter` syncs its records).

    Attempts are appended in completion order, which concurrency makes
    arbitrary; a finished log is put back in a stable order for readers and
    diffs, its run-end record (when given) last. Lines are copied as byte ranges
    from the old file to the new one, never parsed again nor held in memory.
    """
    listed = [key for key in order if key in spans]
    planned = set(listed)
    rest = sorted(span for key, span in spans.items() if key not in planned)
    trailer = b"" if end is None else run_end_line(end).encode()
    with path.open("rb") as source:
        first = source.readline()
        header = len(first) if RUN_HEADER.encode() in first and first.endswith(b"\n") else 0
        head = min((start for start, _ in spans.values()), default=header)
        # The run header stays first; neighbouring lines are copied in one go.
        ranges: list[list[int]] = [[0, head]] if head else []
        for start, stop in [spans[key] for key in listed] + rest:
            if ranges and ranges[-1][1] == start:
                ranges[-1][1] = stop
            else:
                ranges.append([start, stop])

        def write(target: BinaryIO) -> None:
            for start, stop in ranges:
                source.seek(start)
                while start < stop:
                    block = source.read(min(stop - start, _COPY_BYTES))
                    if not block:
                        raise InputError.at(path, None, "the run log shrank while being reordered")
                    target.write(block)
                    start += len(block)
            target.write(trailer)

        write_atomically(path, write, sync=durable)


_COPY_BYTES = 1 << 20
"""The most of the log held at once while reordering it."""


def finish_in_order(
    path: Path,
    spans: dict[AttemptKey, tuple[int, int]],
    order: Iterable[AttemptKey],
    end: RunEnd,
    *,
    durable: bool = True,
) -> None:
    """End a finished run log: `rewrite_in_order`, unless its lines are in plan order
    already (a replay check's cache wrote them so), when only the run-end is appended."""
    listed = [spans[key] for key in order if key in spans]
    if listed and len(listed) == len(spans) and all(a[1] == b[0] for a, b in pairwise(listed)):
        with path.open("ab") as stream:
            if stream.tell() == listed[-1][1]:  # nothing after the last line
                stream.write(run_end_line(end).encode())
                stream.flush()
                if durable:
                    os.fsync(stream.fileno())
                return
    rewrite_in_order(path, spans, order, end, durable=durable)


def _header_bytes(data: bytes) -> int:
    """The length of the run header line at the start of `data` (0 without one)."""
    first = data.split(b"\n", 1)[0]
    return len(first) + 1 if RUN_HEADER.encode() in first and b"\n" in data else 0


def run_log_path(runs: Path, run_id: str) -> Path:
    """Where the log of `run_id` lives; a run id is a name (as `new_run_id` makes them),
    never a path, so `--resume /some/file` cannot reach outside the runs folder."""
    if not is_name(RUN_ID, run_id):
        raise InputError.at(
            runs,
            None,
            f"{run_id!r} is not a run id: give the id of a run in {runs} "
            "(its file name without .jsonl), not a path",
        )
    return confined(runs / f"{run_id}.jsonl", runs)


def newest_run_log(runs: Path) -> Path:
    """The most recent run log (run ids sort by time), or an InputError saying what to run."""
    logs = sorted(runs.glob("*.jsonl")) if runs.is_dir() else []
    if not logs:
        raise InputError.at(
            runs, None, "no run logs yet; run `fcreplay replay` or `fcreplay record` first"
        )
    return logs[-1]


@dataclass(frozen=True)
class ChosenRun:
    """The newest finished run of the wanted mode, and the newer logs passed over."""

    path: Path
    end: RunEnd
    unfinished: tuple[tuple[Path, RunEnd | None], ...]
    """Newer logs skipped because they did not finish (with their run-end, if any)."""
    other_mode: int
    """Newer finished logs skipped because they are of another mode."""


def newest_finished_run(runs: Path, mode: str | None = None) -> ChosenRun:
    """The most recent run that finished (and is of `mode`, when given).

    An InputError says what to run when there is none, and names the unfinished
    logs it passed over.
    """
    logs = sorted(runs.glob("*.jsonl"), reverse=True) if runs.is_dir() else []
    unfinished: list[tuple[Path, RunEnd | None]] = []
    other_mode = 0
    for log in logs:
        end = read_run_end(log)
        if end is None or not end.finished:
            unfinished.append((log, end))
        elif mode is not None and end.mode != mode:
            other_mode += 1
        else:
            return ChosenRun(log, end, tuple(unfinished), other_mode)
    kind = f"finished {mode} run" if mode else "finished run"
    command = "fcreplay record" if mode == "record" else "fcreplay replay` or `fcreplay record"
    skipped = f" ({len(unfinished)} unfinished skipped; name one with --run)" if unfinished else ""
    raise InputError.at(runs, None, f"no {kind} log{skipped}; run `{command}` first")
