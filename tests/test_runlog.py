"""The run log: durable appends, torn tails detected and cut, stable final order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fcreplay.errors import InputError
from fcreplay.record import AttemptRecord
from fcreplay.runlog import (
    RunLogWriter,
    new_run_id,
    newest_finished_run,
    newest_run_log,
    read_run_end,
    read_run_log,
    record_line,
    rewrite_in_order,
)
from fcreplay.runmarks import RunEnd, RunScope, run_end_line

from .records import make_record, record_json


def record(case: str, attempt: int) -> AttemptRecord:
    return make_record(case_id=case, attempt=attempt, model="ä")


def line(case: str, attempt: int) -> str:
    return json.dumps(record_json(case_id=case, attempt=attempt))


def test_appended_records_read_back_in_order(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "r.jsonl"
    with RunLogWriter(path) as writer:
        writer.append(record("a", 1))
        writer.append(record("b", 1))
    contents = read_run_log(path)
    assert [r.key for r in contents.records] == [
        ("t", "auto", "a", 1),
        ("t", "auto", "b", 1),
    ]
    assert contents.torn_line is None
    assert "ä" in path.read_text(encoding="utf-8")


def test_torn_last_line_is_reported_ignored_and_cut_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with RunLogWriter(path) as writer:
        writer.append(record("a", 1))
    with path.open("ab") as stream:
        stream.write(line("b", 1).encode()[:20])  # a write cut short
    contents = read_run_log(path)
    assert len(contents.records) == 1 and contents.torn_line == 2
    with RunLogWriter(path, truncate_to=contents.complete_bytes) as writer:
        writer.append(record("b", 1))
    again = read_run_log(path)
    assert [r.case_id for r in again.records] == ["a", "b"] and again.torn_line is None


def test_complete_json_without_newline_is_still_torn(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(line("a", 1) + "\n" + line("b", 1))
    contents = read_run_log(path)
    assert len(contents.records) == 1 and contents.torn_line == 2


def test_damage_in_the_middle_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(line("a", 1) + "\nnot json\n" + line("b", 1) + "\n")
    with pytest.raises(InputError) as caught:
        read_run_log(path)
    assert caught.value.problems[0].line == 2


def test_a_finished_log_is_rewritten_in_plan_order(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with RunLogWriter(path) as writer:
        writer.append(record("c", 1))
    # A resumed run: the earlier record's place comes from reading the log.
    earlier = read_run_log(path)
    known = {r.key: span for r, span in zip(earlier.records, earlier.spans, strict=True)}
    with RunLogWriter(path, spans=known) as writer:
        for case, attempt in [("b", 2), ("a", 1), ("b", 1)]:
            writer.append(record(case, attempt))
    order = [
        ("t", "auto", "a", 1),
        ("t", "auto", "b", 1),
        ("t", "auto", "b", 2),
        ("t", "auto", "c", 1),
    ]
    rewrite_in_order(path, writer.spans, order)
    assert [r.key for r in read_run_log(path).records] == order
    assert "ä" in path.read_text(encoding="utf-8")


def test_run_ids_sort_by_time_and_newest_is_found(tmp_path: Path) -> None:
    first, second = new_run_id("replay"), new_run_id("record")
    assert first != second and "-replay-" in first
    (tmp_path / "20250101T000000Z-replay-aaaaaa.jsonl").write_text("")
    (tmp_path / "20260101T000000Z-replay-bbbbbb.jsonl").write_text("")
    assert newest_run_log(tmp_path).name.startswith("2026")
    with pytest.raises(InputError, match="no run logs yet"):
        newest_run_log(tmp_path / "missing")


def test_a_finished_log_ends_with_its_run_end_and_the_tail_alone_tells(tmp_path: Path) -> None:
    path = tmp_path / "20260101T000000Z-replay-aaaaaa.jsonl"
    with RunLogWriter(path) as writer:
        writer.append(record("a", 1))
    scope = RunScope(case_ids=("a",))
    rewrite_in_order(
        path, writer.spans, [("t", "auto", "a", 1)], RunEnd("r", "replay", True, 1, None, scope)
    )
    contents = read_run_log(path)
    assert contents.finished and contents.end is not None and contents.end.scope == scope
    assert [r.case_id for r in contents.records] == ["a"]
    assert read_run_end(path) == contents.end
    assert contents.complete_bytes == len(record_line(record("a", 1)).encode())


def test_a_stopped_log_says_why_and_a_run_end_before_the_last_line_is_damage(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.jsonl"
    with RunLogWriter(path) as writer:
        writer.append(record("a", 1))
        writer.end(RunEnd("r", "record", False, 1, "interrupted"))
    end = read_run_log(path).end
    assert end is not None and not end.finished and "interrupted" in end.state
    with path.open("a", encoding="utf-8") as stream:
        stream.write(line("b", 1) + "\n")
    with pytest.raises(InputError, match="run-end record before the last line"):
        read_run_log(path)


def test_version_1_lines_still_read_and_write_back_unchanged() -> None:
    old = record_line(make_record())
    assert json.loads(old)["schema_version"] == 1 and "fingerprint" not in old
    assert record_line(AttemptRecord.from_json(json.loads(old))) == old


def test_the_newest_finished_run_of_a_mode_is_chosen_and_the_rest_named(tmp_path: Path) -> None:
    def log(name: str, end: RunEnd | None) -> None:
        path = tmp_path / f"{name}.jsonl"
        path.write_text(line("a", 1) + "\n", encoding="utf-8")
        if end is not None:
            with path.open("a", encoding="utf-8") as stream:
                stream.write(run_end_line(end))

    log("20260101T000000Z-record-aaaaaa", RunEnd("a", "record", True, 1))
    log("20260102T000000Z-replay-bbbbbb", RunEnd("b", "replay", True, 1))
    log("20260103T000000Z-replay-cccccc", RunEnd("c", "replay", False, 1, "interrupted"))
    log("20260104T000000Z-replay-dddddd", None)  # killed: no run-end at all
    chosen = newest_finished_run(tmp_path)
    assert chosen.path.stem.endswith("bbbbbb")
    assert [p.stem[-6:] for p, _ in chosen.unfinished] == ["dddddd", "cccccc"]
    assert newest_finished_run(tmp_path, "record").path.stem.endswith("aaaaaa")
    with pytest.raises(InputError, match="no finished record run log"):
        newest_finished_run(tmp_path / "missing", "record")
