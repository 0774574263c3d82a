"""Writes stay in the suite's folders; resume never mixes runs; a kill loses nothing finished."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fcreplay.atomic import JOURNAL, sweep, write_group_atomically
from fcreplay.cli import run
from fcreplay.runlog import newest_run_log, read_run_log

from .conftest import ROOT

ONE_CASE = ["--target", "sim-openai-chat", "--variant", "auto", "--case", "direct_lookup"]


@pytest.fixture
def replayed(suite_dir: Path) -> Path:
    """The example suite with its cassettes and goldens, replayed once."""
    for folder in ("cassettes", "golden"):
        shutil.copytree(ROOT / folder, suite_dir / folder)
    config = suite_dir / "fcreplay.toml"
    assert run(["replay", "--config", str(config), *ONE_CASE]) == 0
    return config


def crafted_log(replayed: Path, target: str) -> Path:
    log = newest_run_log(replayed.parent / "runs")
    lines = log.read_text(encoding="utf-8").splitlines()[1:]  # after the run header
    records = [json.loads(line) for line in lines]
    for record in records:
        record["target"] = target
    crafted = replayed.parent / "crafted.jsonl"
    crafted.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return crafted


@pytest.mark.parametrize("target", ["../../x", "/tmp/fcreplay-abs-x", "a/../../x", "x\n"])
def test_golden_update_with_a_crafted_target_writes_nothing_and_exits_2(
    replayed: Path, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    crafted = crafted_log(replayed, target)
    before = {p: p.read_bytes() for p in replayed.parent.rglob("*") if p.is_file()}
    code = run(
        ["golden", "update", "--config", str(replayed), "--run", str(crafted), "--reason", "r"]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"{crafted}:1: not an attempt record: target" in err
    after = {p: p.read_bytes() for p in replayed.parent.rglob("*") if p.is_file()}
    assert after == before
    assert not Path("/tmp/fcreplay-abs-x.json").exists()
    assert not (replayed.parent.parent / "x.json").exists()


def test_resume_takes_a_run_id_not_a_path(replayed: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("", encoding="utf-8")
    code = run(["record", "--config", str(replayed), *ONE_CASE, "--resume", str(outside)])
    assert code == 2
    assert outside.read_text(encoding="utf-8") == ""


def test_a_symlink_out_of_the_cassettes_folder_is_refused(
    replayed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = replayed.parent / "cassettes" / "sim-openai-chat" / "auto" / "direct_lookup.json"
    target = tmp_path / "outside.json"
    shutil.copy(cassette, target)
    cassette.unlink()
    cassette.symlink_to(target)
    assert run(["replay", "--config", str(replayed), *ONE_CASE]) == 2
    assert "leads outside" in capsys.readouterr().err
    inside = cassette.parent / "real.json"
    shutil.copy(target, inside)
    cassette.unlink()
    cassette.symlink_to(inside)  # a link that stays inside is fine
    assert run(["replay", "--config", str(replayed), *ONE_CASE]) == 0


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_symlink_after_the_first_cassette_of_its_folder_is_refused_too(
    replayed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    # The folder is checked with its first cassette; the ones after it are read refusing
    # to follow a link, which then gets the same check.
    folder = replayed.parent / "cassettes" / "sim-openai-chat" / "auto"
    cassette = folder / "missing_id.json"  # the case after direct_lookup
    target = tmp_path / "outside.json"
    shutil.copy(cassette, target)
    cassette.unlink()
    cassette.symlink_to(target)
    one_folder = ["--target", "sim-openai-chat", "--variant", "auto", "--jobs", jobs]
    assert run(["replay", "--config", str(replayed), *one_folder]) == 2
    assert f"{cassette}: leads outside" in capsys.readouterr().err
    inside = folder / "real.json"
    shutil.copy(target, inside)
    cassette.unlink()
    cassette.symlink_to(inside.name)  # a link that stays inside is fine
    assert run(["replay", "--config", str(replayed), *one_folder]) == 0
    records = read_run_log(newest_run_log(replayed.parent / "runs")).records
    assert {r.case_id for r in records} >= {"direct_lookup", "missing_id"}


def test_a_config_path_outside_the_project_needs_the_explicit_key(
    replayed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = replayed.read_text(encoding="utf-8")
    replayed.write_text(text.replace('runs = "runs"', 'runs = "../runs-elsewhere"'), "utf-8")
    assert run(["replay", "--config", str(replayed), *ONE_CASE]) == 2
    assert "leads outside the project" in capsys.readouterr().err
    replayed.write_text("allow_outside_project = true\n" + replayed.read_text("utf-8"), "utf-8")
    assert run(["replay", "--config", str(replayed), *ONE_CASE]) == 0


def resume(config: Path, log: Path) -> int:
    return run(["record", "--config", str(config), *ONE_CASE, "--resume", log.stem])


@pytest.mark.parametrize(
    ("what", "change", "named"),
    [
        (
            "contract",
            lambda d: _edit(d / "contracts/delivery_tools.json", "заказ", "Заказ"),
            "contract",
        ),
        ("prompt", lambda d: _edit(d / "contracts/delivery_prompt.txt", "", "!"), "prompt"),
        ("cases", lambda d: _append(d / "cases/delivery.jsonl", "\n"), "cases"),
        (
            "settings",
            lambda d: _edit(d / "fcreplay.toml", "max_steps = 4", "max_steps = 5"),
            "settings",
        ),
        ("model", lambda d: _edit(d / "fcreplay.toml", "fcreplay-sim-careful", "other"), "targets"),
    ],
)
def test_resuming_after_a_change_is_refused_naming_it(
    replayed: Path, what: str, change: object, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _record_header_only(replayed)
    change(replayed.parent)  # type: ignore[operator]
    assert resume(replayed, log) == 2
    err = capsys.readouterr().err
    assert f"{log}:1: cannot resume: the {named} changed" in err
    assert len(read_run_log(log).records) == 0


def test_resuming_a_replay_run_as_a_record_run_is_refused(
    replayed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = newest_run_log(replayed.parent / "runs")
    assert resume(replayed, log) == 2
    assert "cannot resume a replay run as a record:all run" in capsys.readouterr().err


def test_a_case_selected_twice_is_run_once(replayed: Path) -> None:
    assert run(["replay", "--config", str(replayed), *ONE_CASE, "--case", "direct_lookup"]) == 0
    records = read_run_log(newest_run_log(replayed.parent / "runs")).records
    assert len(records) == len({r.key for r in records}) == 3


def _record_header_only(config: Path) -> Path:
    """A record run's log holding its header and no attempt (killed before the first)."""
    from fcreplay.engine.fingerprint import run_fingerprint
    from fcreplay.engine.plan import plan_units
    from fcreplay.engine.runner import _adapters
    from fcreplay.inputs.suite import load_suite
    from fcreplay.runlog import RunLogWriter, new_run_id, run_log_path
    from fcreplay.runmarks import RunHeader

    suite = load_suite(config)
    units = plan_units(suite, targets=[ONE_CASE[1]], variants=[ONE_CASE[3]], case_ids=[ONE_CASE[5]])
    run_id = new_run_id("record")
    log = run_log_path(suite.config.runs, run_id)
    with RunLogWriter(log) as writer:
        writer.start(
            RunHeader(run_id, "record:all", run_fingerprint(suite, units, _adapters(units)))
        )
    return log


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(old, new, 1) if old else text + new, encoding="utf-8")


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def test_temp_files_of_killed_writers_are_swept_and_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / "t" / f".c.json.{dead.pid}.abcd1234.tmp"
    live = tmp_path / "t" / f".d.json.{os.getpid()}.abcd1234.tmp"
    stale.parent.mkdir()
    stale.write_text("half", encoding="utf-8")
    live.write_text("in progress", encoding="utf-8")
    assert sweep(tmp_path) == [stale]
    assert live.exists() and not stale.exists()


def test_a_group_write_killed_after_its_commit_point_is_finished_by_the_next(
    tmp_path: Path,
) -> None:
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text("old", encoding="utf-8")
    # Killed between the journal and the renames: the next run rolls forward.
    temporary = tmp_path / ".a.json.1.x.tmp"
    temporary.write_text("new", encoding="utf-8")
    (tmp_path / JOURNAL).write_text(json.dumps([[temporary.name, "a.json"]]), encoding="utf-8")
    write_group_atomically(tmp_path, {"b.json": "new"})
    assert [(tmp_path / n).read_text("utf-8") for n in ("a.json", "b.json")] == ["new", "new"]
    assert not (tmp_path / JOURNAL).exists()


KILLER = """
import os, signal, sys
from pathlib import Path
import fcreplay.atomic as atomic
point, folder = sys.argv[1], Path(sys.argv[2])
real_replace, real_write = os.replace, atomic._write_temporary
count = {"replace": 0, "write": 0}
def replace(a, b):
    count["replace"] += 1
    if point == f"replace{count['replace']}":
        os.kill(os.getpid(), signal.SIGKILL)
    real_replace(a, b)
def write(path, *args, **kwargs):
    count["write"] += 1
    if point == f"write{count['write']}":
        os.kill(os.getpid(), signal.SIGKILL)
    return real_write(path, *args, **kwargs)
atomic.os.replace = replace
atomic._write_temporary = write
atomic.write_group_atomically(folder, {f"g{i}.json": "new" for i in range(4)})
"""


@pytest.mark.parametrize(
    "point", [f"write{n}" for n in range(1, 6)] + [f"replace{n}" for n in range(1, 6)]
)
def test_a_kill_at_any_write_point_leaves_all_old_or_all_new(tmp_path: Path, point: str) -> None:
    names = [f"g{i}.json" for i in range(4)]
    for name in names:
        (tmp_path / name).write_text("old", encoding="utf-8")
    child = subprocess.run(
        [sys.executable, "-c", KILLER, point, str(tmp_path)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert child.returncode == -signal.SIGKILL
    sweep(tmp_path)  # what the next run does first
    contents = {(tmp_path / name).read_text("utf-8") for name in names}
    assert contents in ({"old"}, {"new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == names
