"""`fcreplay diff RUN_A RUN_B`: the decision diff of two runs, with the golden diff's classes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import fcreplay
from fcreplay.engine import runner
from fcreplay.golden.compare import RunSide
from fcreplay.golden.rundiff import diff_runs, started_at
from fcreplay.inputs.suite import load_suite
from fcreplay.runlog import new_run_id
from fcreplay.simulator.server import base_urls, running_simulator

from .recorded_suite import CONFIG, SCRIPT, cli, recorded_copy, replay
from .records import make_record

UNITS = 28
"""(4 cases × 3 variants + 2 forced) × 2 targets."""


@pytest.fixture
def recorded(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return recorded_copy(tmp_path_factory, tmp_path)


def log_of(suite: Path, run_id: str) -> Path:
    return suite / "runs" / f"{run_id}.jsonl"


def derive(
    suite: Path, run_id: str, edit: Callable[[dict[str, Any]], None], mode: str = "replay"
) -> str:
    """A copy of a run log under a new (newer) run id, each attempt record passed to `edit`."""
    new = new_run_id(mode)
    lines = []
    for line in log_of(suite, run_id).read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        data["run_id"] = new
        if "run_end" not in data and "fcreplay_run" not in data:  # attempt records only
            edit(data)
        lines.append(json.dumps(data, ensure_ascii=False))
    log_of(suite, new).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return new


def unit(data: dict[str, Any], target: str, variant: str, case_id: str) -> bool:
    return (data["target"], data["variant"], data["case_id"]) == (target, variant, case_id)


def regress_and_fix(data: dict[str, Any]) -> None:
    """careful/auto/lookup now fails; hasty/auto/cancel now passes, its findings gone."""
    if unit(data, "careful", "auto", "lookup"):
        data["verdict"] = "fail"
        data["signature"] = ["tool_call", ["get_order"], '[{"order_id":"ORD-999999"}]']
    if unit(data, "hasty", "auto", "cancel"):
        data["verdict"], data["findings"] = "pass", []


def classes(out: str) -> dict[tuple[str, str, str], str]:
    return {(d["target"], d["variant"], d["case_id"]): d["class"] for d in json.loads(out)["diffs"]}


def test_a_regression_and_a_fix_between_two_runs_in_every_format(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = replay(recorded).run_id
    after = derive(recorded, before, regress_and_fix)
    code, out, err = cli(recorded, capsys, "diff", before, after, "--format", "json")
    assert code == 1, err
    data = json.loads(out)
    assert classes(out) == {
        ("careful", "auto", "lookup"): "regression",
        ("hasty", "auto", "cancel"): "fix",
    }
    assert data["counts"]["unchanged"] == UNITS - 2 and data["run_id"] == after
    compared = data["comparison"]
    assert compared["before"]["run_id"] == before and compared["after"]["run_id"] == after
    assert compared["before"]["mode"] == "replay" and compared["before"]["started"]
    assert compared["compared_units"] == UNITS and compared["inputs_differ"] == []
    regression = next(d for d in data["diffs"] if d["class"] == "regression")
    assert regression["golden"]["provenance"]["run_id"] == before  # A's side, built as golden
    assert not (recorded / "golden").exists()  # no golden file read or written

    code, text, _ = cli(recorded, capsys, "diff", before, after)
    assert code == 1
    lines = text.splitlines()
    assert lines[0] == (
        f"run diff: A {before} -> B {after}: 1 regression, 1 fix, 0 flaky, 0 changed, "
        f"0 stale, 0 new, 0 missing; {UNITS - 2} unchanged"
    )
    assert lines[1].startswith(f"A (before): run {before} — replay, started ")
    assert "finished (56 attempts); targets careful (sim-careful), hasty (sim-hasty)" in lines[1]
    assert lines[2].startswith(f"B (after): run {after} — replay")
    assert "inputs that differ: none in the 28 units compared" in text
    assert '/calls/0/arguments/order_id: "ORD-123456" -> "ORD-999999"' in text
    assert "careful/auto/lookup  regression" in text and "hasty/auto/cancel  fix" in text
    assert "golden update" not in text  # nothing to accept into a golden file

    code, junit, _ = cli(recorded, capsys, "diff", before, after, "--format", "junit")
    suites = ET.fromstring(junit)
    assert suites.get("name") == "fcreplay run diff"
    assert suites.get("tests") == str(UNITS) and suites.get("failures") == "1"
    failure = suites.find(".//testcase[@name='lookup [auto]']/failure")
    assert failure is not None and failure.get("type") == "regression"

    # The other way round, the regression is the fix and the fix the regression.
    code, out, _ = cli(recorded, capsys, "diff", after, before, "--format", "json")
    assert classes(out) == {
        ("careful", "auto", "lookup"): "fix",
        ("hasty", "auto", "cancel"): "regression",
    }
    # --fail-on narrows what fails; a run against itself differs in nothing.
    assert cli(recorded, capsys, "diff", before, after, "--fail-on", "flaky,missing")[0] == 0
    assert cli(recorded, capsys, "diff", before, after, "--fail-on", "regression")[0] == 1
    code, _, err = cli(recorded, capsys, "diff", before, before)
    assert code == 0 and "RUN_A and RUN_B are the same run" in err


def test_run_b_defaults_to_the_newest_finished_run_and_a_path_names_a_run(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = replay(recorded).run_id
    after = derive(recorded, before, regress_and_fix)
    code, out, err = cli(recorded, capsys, "diff", str(log_of(recorded, before)))
    assert code == 1 and f"diff: run {after} (the newest finished run)" in err
    assert out.startswith(f"run diff: A {before} -> B {after}: 1 regression, 1 fix")


def test_the_markdown_fits_its_cap_and_says_how_to_get_the_rest(
    recorded: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before = replay(recorded).run_id

    def everything_else(data: dict[str, Any]) -> None:
        data["verdict"] = "fail" if data["verdict"] == "pass" else "pass"
        data["signature"] = ["tool_call", ["get_order"], '[{"order_id":"ORD-000000"}]']

    after = derive(recorded, before, everything_else)
    full = tmp_path / "full.md"
    args = ["diff", before, after, "--format", "markdown", "--max-chars", "2000"]
    code, capped, _ = cli(recorded, capsys, *args)
    assert code == 1 and len(capped) <= 2000
    status = "22 regression · 4 fix · 2 changed; 0 unchanged"
    assert capped.startswith(f"**fcreplay run diff** ({status}) — A `{before}` → B `{after}`")
    assert f"- A (before): run {before} — replay" in capped
    assert "_Cut to fit 2,000 characters; not shown:" in capped
    assert f"`fcreplay diff {before} {after} --format markdown --full-output FILE`" in capped
    code, _, _ = cli(recorded, capsys, *args, "--full-output", str(full))
    whole = full.read_text(encoding="utf-8")
    assert "Cut to fit" not in whole and "| path | A | B |" in whole
    assert "| case | variants × targets | A → B | findings |" in whole
    assert f"A: careful in run {before}, model sim-careful" in whole


def test_pair_compares_a_target_of_one_run_with_another_target(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = replay(recorded).run_id
    code, out, _ = cli(recorded, capsys, "diff", run_id, run_id, "--pair", "careful=hasty")
    assert code == 1
    assert "paired targets: careful of A with hasty of B" in out
    assert "settings (14 of 28 units, model sim-careful → sim-hasty)" in out
    assert "adapter (14 of 28 units, " in out and "never stale for it" in out
    assert "not compared: hasty of A" in out
    code, out, _ = cli(
        recorded, capsys, "diff", run_id, run_id, "--pair", "careful=hasty", "--format", "json"
    )
    found = classes(out)
    assert found[("hasty", "auto", "cancel")] == "regression"  # careful passes it, hasty not
    assert all(target == "hasty" for target, *_ in found)  # careful against itself: unchanged
    assert "stale" not in found.values()
    assert json.loads(out)["comparison"]["pairs"] == [{"before": "careful", "after": "hasty"}]

    # Two runs of differently named targets pair only when told to.
    def rename(data: dict[str, Any]) -> None:
        if data["target"] == "hasty":
            data["target"] = "hasty-v2"

    renamed = derive(recorded, run_id, rename)
    code, out, _ = cli(recorded, capsys, "diff", run_id, renamed)
    assert code == 1 and "not compared: hasty of A" in out
    assert "only in B: hasty-v2 (every entry new)" in out and "14 new" in out.splitlines()[0]
    paired = ["diff", run_id, renamed, "--pair", "hasty=hasty-v2"]
    code, out, err = cli(recorded, capsys, *paired)
    assert code == 0, out + err
    code, out, _ = cli(recorded, capsys, *paired, "--format", "markdown")
    assert "(no differences)" in out.splitlines()[0]


def test_a_new_prompt_version_is_compared_decision_by_decision_never_stale(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (first,) = (p.stem for p in (recorded / "runs").glob("*-record-*.jsonl"))
    prompt = recorded / "contracts" / "delivery_prompt.txt"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nОтвечай кратко.\n", "utf-8")
    with running_simulator(SCRIPT) as url:
        config = CONFIG.format(**base_urls(url)).replace("test-prompt-v1", "test-prompt-v2")
        (recorded / "fcreplay.toml").write_text(config, encoding="utf-8")
        second = runner.record(load_suite(recorded / "fcreplay.toml"), runner.RecordOptions())
    code, out, err = cli(recorded, capsys, "diff", first, second.run_id)
    assert code == 0, out + err
    assert "0 stale" in out.splitlines()[0] and f"{UNITS} unchanged" in out.splitlines()[0]
    assert "inputs that differ: prompt (all 28 units, prompt_version test-prompt-v1 → " in out
    assert "test-prompt-v2)" in out
    # A replay of the old recordings with the new prompt did not test the model: stale.
    prompt.write_text("Другой промпт.\n", "utf-8")
    stale = replay(recorded).run_id
    code, out, _ = cli(recorded, capsys, "diff", first, stale, "--format", "json")
    assert code == 1 and json.loads(out)["counts"]["stale"] == UNITS


def test_an_unfinished_run_is_skipped_by_default_and_read_when_named(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = replay(recorded).run_id
    log = log_of(recorded, derive(recorded, before, lambda data: None))
    lines = log.read_text(encoding="utf-8").splitlines()
    log.write_text("\n".join(lines[:10]) + "\n", encoding="utf-8")  # killed: no run-end record
    code, out, err = cli(recorded, capsys, "diff", before)
    assert f"skipped run {log.stem}: it did not finish" in err
    assert f"diff: run {before} (the newest finished run)" in err and code == 0
    code, out, err = cli(recorded, capsys, "diff", before, log.stem)
    assert f"{log}: this run did not finish (it has no run-end record)" in err
    assert code == 1 and "no run-end record (killed, or still running)" in out


def test_bad_runs_and_pairs_are_input_errors_naming_the_file(
    recorded: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = replay(recorded).run_id
    capsys.readouterr()
    missing = tmp_path / "nowhere.jsonl"
    code, out, err = cli(recorded, capsys, "diff", str(missing), run_id)
    assert code == 2 and out == ""
    expected = "run log not found (give the path of an existing run log, or a run id)"
    assert err == f"{missing}: {expected}\n"
    code, _, err = cli(recorded, capsys, "diff", run_id, "no-such-run")
    assert code == 2 and "no run 'no-such-run'" in err
    damaged = tmp_path / "damaged.jsonl"
    lines = log_of(recorded, run_id).read_text(encoding="utf-8").splitlines()
    damaged.write_text("\n".join([*lines[:2], "{oops", *lines[2:]]) + "\n", encoding="utf-8")
    code, _, err = cli(recorded, capsys, "diff", str(damaged), run_id)
    assert code == 2 and err.startswith(f"{damaged}:3: not valid JSON")
    code, _, err = cli(recorded, capsys, "diff", run_id, run_id, "--pair", "careful=nobody")
    assert code == 2 and "Traceback" not in err
    assert f"{log_of(recorded, run_id)}: --pair careful=nobody: run B has no target 'nobody'" in err
    code, _, err = cli(recorded, capsys, "diff", run_id, run_id, "--pair", "careful")
    assert code == 2 and "expected TARGET_A=TARGET_B" in err
    code, _, err = cli(recorded, capsys, "diff", run_id, run_id, "--fail-on", "regresion")
    assert code == 2 and "unknown class 'regresion'" in err


def side(name: str) -> RunSide:
    return RunSide(name, name, name, f"{name}.jsonl", "replay", None, "finished", 1, ())


def test_classes_come_from_decisions_and_a_stale_baseline_is_stale() -> None:
    before = [
        make_record(case_id="ok", contract_hash="h1", prompt_version="p1"),
        make_record(
            case_id="gone",
            verdict="error",
            signature=None,
            transport_error={"type": "missing_cassette", "message": "no cassette"},
        ),
    ]
    after = [
        make_record(case_id="ok", contract_hash="h2", prompt_version="p2"),
        make_record(case_id="gone"),
    ]
    result = diff_runs(before, after, sides=(side("A"), side("B")))
    assert [(d.case_id, d.kind) for d in result.diffs] == [("gone", "stale")]
    assert result.diffs[0].causes == ("no recording",)
    assert result.unchanged == (("t", "ok", "auto"),)  # another contract: compared, not stale
    compared = result.comparison
    assert compared is not None
    assert [(c.part, c.units, c.detail) for c in compared.inputs] == [
        ("contract", 1, "h1 → h2"),
        ("prompt", 1, "prompt_version p1 → p2"),
    ]
    assert started_at("20250102T100000123Z-record-abc123") == "2025-01-02 10:00:00Z"
    assert started_at("my-run") is None


def test_the_python_api_takes_results_paths_or_records(recorded: Path) -> None:
    first = replay(recorded)
    second = log_of(recorded, derive(recorded, first.run_id, regress_and_fix))
    diff = fcreplay.run_diff(first, second)
    assert (diff.counts()["regression"], diff.counts()["fix"]) == (1, 1)
    assert diff.comparison is not None and diff.comparison.after.run_id == second.stem
    paired = fcreplay.run_diff(first.records, first.records, pairs=[("careful", "hasty")])
    assert paired.comparison is not None and paired.comparison.pairs == (("careful", "hasty"),)
    assert paired.counts()["regression"] > 0
