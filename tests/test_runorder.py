"""Blocks of log lines that come back out of plan order are written in it."""

from __future__ import annotations

from pathlib import Path

import pytest

import fcreplay.runorder as runorder
from fcreplay.record import AttemptKey
from fcreplay.runlog import RunLogWriter, finish_in_order, read_run_log, record_line
from fcreplay.runmarks import RunEnd
from fcreplay.runorder import OrderedBlocks

from .records import make_record

ORDER: list[AttemptKey] = [("t", "auto", case, n) for case in "abcd" for n in (1, 2)]


def block(*cases: str) -> tuple[list[AttemptKey], list[int], bytes]:
    keys = [key for key in ORDER if key[2] in cases]
    lines = [record_line(make_record(case_id=k[2], attempt=k[3])).encode() for k in keys]
    return keys, [len(line) for line in lines], b"".join(lines)


def written(
    path: Path, blocks: list[tuple[list[AttemptKey], list[int], bytes]]
) -> tuple[list[int], bool]:
    """The lines in the log as each block comes, and whether they came to be in order."""
    seen = []
    with RunLogWriter(path) as writer:
        ordered = OrderedBlocks(writer, iter(ORDER))
        for keys, sizes, data in blocks:
            ordered.add(keys, sizes, data)
            seen.append(len(writer.spans))
        ordered.flush()
    in_order = sorted(writer.spans, key=writer.spans.__getitem__) == ORDER
    finish_in_order(path, writer.spans, ORDER, RunEnd("r", "replay", True, len(ORDER), None))
    assert [r.key for r in read_run_log(path).records] == ORDER
    return seen, in_order


def test_a_block_before_its_turn_waits_for_those_before_it(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    assert written(path, [block("b"), block("c"), block("a"), block("d")]) == ([0, 0, 6, 8], True)


def test_blocks_held_past_their_limit_are_written_and_the_log_reordered_at_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runorder, "_WAITING_BYTES", 0)
    path = tmp_path / "r.jsonl"
    assert written(path, [block("c"), block("a", "b"), block("d")]) == ([2, 6, 8], False)
