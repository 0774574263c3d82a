"""The attempt record: run-log lines read back into the typed record and written unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fcreplay.engine.runner import ReplayOptions, replay
from fcreplay.errors import InputError
from fcreplay.inputs.suite import load_suite
from fcreplay.record import Aborted, AttemptRecord, RecordShapeError
from fcreplay.runlog import read_run_log, record_line

from .conftest import ROOT
from .records import make_record, record_json


def replayed_lines(suite_dir: Path, cassettes: Path) -> list[str]:
    suite = load_suite(suite_dir / "fcreplay.toml")
    cases = ("direct_lookup", "lookup_not_found", "two_orders_parallel", "quote_comma_decimal")
    result = replay(suite, ReplayOptions(cassettes_dir=cassettes, case_ids=cases))
    header, *lines, end = result.log_path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert json.loads(header)["fcreplay_run"] == 1  # the run header comes first
    assert json.loads(end)["run_end"]["finished"] is True
    return lines


def test_every_logged_line_reads_back_and_writes_the_same_bytes(suite_dir: Path) -> None:
    lines = replayed_lines(suite_dir, ROOT / "cassettes")
    # 4 targets × (4 cases × auto, no_tools, reversed + 3 single-call cases forced) × 3 repetitions
    assert len(lines) == 4 * (4 * 3 + 3) * 3
    for line in lines:
        assert record_line(AttemptRecord.from_json(json.loads(line))) == line


def test_drift_and_a_missing_cassette_round_trip_as_typed_values(
    suite_dir: Path, tmp_path: Path
) -> None:
    cassettes = tmp_path / "cassettes"
    for target in ("sim-openai-chat", "sim-anthropic"):
        folder = cassettes / target / "auto"
        folder.mkdir(parents=True)
        (folder / "direct_lookup.json").write_bytes(
            (ROOT / "cassettes" / target / "auto" / "direct_lookup.json").read_bytes()
        )
    contract = suite_dir / "contracts" / "delivery_tools.json"
    text = contract.read_text(encoding="utf-8")
    contract.write_text(text.replace("Идентификатор вида", "Идентификатор"), encoding="utf-8")
    lines = replayed_lines(suite_dir, cassettes)
    records = [AttemptRecord.from_json(json.loads(line)) for line in lines]
    drifted = [r for r in records if r.drift is not None]
    missing = [r for r in records if r.replay_miss]
    assert drifted and missing
    drift = drifted[0].drift
    assert drift is not None and drift.changes and drift.step == 0
    assert any("description" in change.path for change in drift.changes)
    assert isinstance(missing[0].transport_error, Aborted)
    assert missing[0].problem and "fcreplay record" in missing[0].problem
    for record, line in zip(records, lines, strict=True):
        assert record_line(record) == line


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"attempt": "1"}, "attempt"),
        ({"verdict": "maybe"}, "verdict"),
        ({"target": None}, "target"),
        ({"signature": ["text", "x", "[]"]}, "signature"),
        ({"schema_version": 99}, "schema_version"),
        ({"steps": [{"step": 0}]}, "request_sha256"),
    ],
)
def test_a_line_of_the_wrong_shape_names_what_is_wrong(
    change: dict[str, object], named: str
) -> None:
    with pytest.raises(RecordShapeError, match=named):
        AttemptRecord.from_json(record_json(**change))


def test_a_missing_key_is_named() -> None:
    data = record_json()
    del data["expect"]
    with pytest.raises(RecordShapeError, match="'expect'"):
        AttemptRecord.from_json(data)


def test_the_log_reader_reports_the_line_of_a_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    good = record_line(make_record())
    path.write_text(good + json.dumps(record_json(verdict=3)) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_run_log(path)
    (problem,) = caught.value.problems
    assert problem.line == 2 and "verdict" in problem.message
