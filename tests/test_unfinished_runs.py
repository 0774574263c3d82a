"""Only complete runs are taken by default: one that stopped or was killed is skipped, and said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fcreplay.runlog import read_run_log

from .recorded_suite import cli, recorded_copy, replay


@pytest.fixture
def recorded(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return recorded_copy(tmp_path_factory, tmp_path)


def stopped_replay(suite: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A replay that stops on a damaged cassette late in the plan; its log path."""
    (suite / "cassettes" / "hasty" / "reversed" / "implicit.json").write_text("{", "utf-8")
    before = set((suite / "runs").glob("*.jsonl"))
    code, _, err = cli(suite, capsys, "replay")
    assert code == 2 and "implicit.json" in err
    (log,) = set((suite / "runs").glob("*.jsonl")) - before
    return log


def test_a_replay_that_stops_says_so_in_its_last_record_and_is_skipped(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    finished = replay(recorded)
    log = stopped_replay(recorded, capsys)
    contents = read_run_log(log)
    assert contents.end is not None and not contents.finished
    assert contents.records and "implicit.json" in (contents.end.reason or "")
    for command in (["report", "--format", "json"], ["golden", "diff", "--format", "json"]):
        code, out, err = cli(recorded, capsys, *command)
        assert f"skipped run {log.stem}: it did not finish (stopped after" in err
        assert f"name it with --run {log.stem}" in err
        assert json.loads(out)["run_id"] == finished.run_id, command
    code, out, err = cli(recorded, capsys, "report", log.stem, "--format", "json")
    assert code == 0 and "this run did not finish" in err
    assert json.loads(out)["run_id"] == log.stem


def test_golden_update_takes_the_newest_finished_record_run_and_prunes_only_its_scope(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (recorded_run,) = (recorded / "runs").glob("*-record-*.jsonl")
    replay(recorded)  # newer, finished, but a replay
    stopped_replay(recorded, capsys)
    code, out, err = cli(recorded, capsys, "golden", "update", "--reason", "baseline", "--prune")
    assert code == 0, err
    assert f"golden update: run {recorded_run.stem} (the newest finished record run)" in err
    assert f"changed from run {recorded_run.stem}" in out
    careful = json.loads((recorded / "golden" / "careful.json").read_text("utf-8"))
    assert set(careful["entries"]) == {"lookup", "clarify", "cancel", "implicit"}
    # A replay of one case is scoped to that case: the other entries are neither
    # missing in its diff nor pruned from it.
    code, out, err = cli(recorded, capsys, "replay", "--case", "lookup")
    code, out, err = cli(recorded, capsys, "golden", "diff")
    assert code == 0, out
    assert "0 missing" in out.splitlines()[0] or "no differences" in out
