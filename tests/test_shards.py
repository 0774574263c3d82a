"""`check --shard K/N` and `merge`: the shards' run logs merged give one unsharded check."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fcreplay.engine.plan import plan_units
from fcreplay.inputs.suite import load_suite
from fcreplay.shards import Shard, parse_shard, shard_of

from .conftest import ROOT
from .recorded_suite import baseline, cli, edit_argument, recorded_copy

RUN_ID = re.compile(r"\d{8}T\d{9}Z-[a-z]+-[0-9a-f]{6}")


@pytest.fixture
def suite(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    copy = recorded_copy(tmp_path_factory, tmp_path)
    baseline(copy)
    # A finding to carry through the shards: a regression with its evidence.
    edit_argument(copy / "cassettes" / "careful" / "auto" / "lookup.json", "order_id", "X-1")
    return copy


def log_of(out: str) -> Path:
    match = re.search(r"^replayed run \S+ \((.+)\)$", out, re.MULTILINE)
    assert match, out
    return Path(match.group(1))


def body(out: str) -> str:
    """Everything after the line naming the run and its log."""
    lines = RUN_ID.sub("RUN", out).splitlines()
    return "\n".join(line for line in lines if not line.startswith("replayed run "))


def records(log: Path) -> list[dict[str, object]]:
    lines = []
    for line in log.read_text(encoding="utf-8").splitlines():
        document = json.loads(line)
        document.pop("run_id", None)
        document.pop("elapsed_ms", None)
        lines.append(document)
    return lines


def shard_logs(suite: Path, capsys: pytest.CaptureFixture[str], count: int = 4) -> list[str]:
    logs = []
    for index in range(1, count + 1):
        code, out, err = cli(suite, capsys, "check", "--no-cache", "--shard", f"{index}/{count}")
        assert code in (0, 1), err
        logs.append(str(log_of(out)))
    return logs


def test_shard_assignment_is_by_unit_name_alone() -> None:
    # Pinned: a change of the hash would move the units of every CI setup at once.
    assert shard_of("careful", "auto", "lookup", 4) == 1
    assert shard_of("hasty", "reversed", "implicit", 4) == 4
    assert shard_of("careful", "forced", "cancel", 4) == 2
    assert {shard_of("t", "auto", f"case-{n}", 4) for n in range(200)} == {1, 2, 3, 4}
    assert all(shard_of("t", "auto", f"case-{n}", 1) == 1 for n in range(20))


def test_adding_a_case_moves_no_other_unit(suite: Path) -> None:
    def assignment() -> dict[str, int]:
        units = plan_units(load_suite(suite / "fcreplay.toml"))
        return {u.label: shard_of(u.target.name, u.variant, u.case.id, 4) for u in units}

    before = assignment()
    cases = suite / "cases" / "cases.jsonl"
    extra = {"id": "extra", "user": "Привет", "expect": {"kind": "text", "must_not_call": True}}
    cases.write_text(cases.read_text(encoding="utf-8") + json.dumps(extra) + "\n")
    after = assignment()
    assert {label: after[label] for label in before} == before
    assert set(after) - set(before) == {
        f"{t}/{v}/extra" for t in ("careful", "hasty") for v in ("auto", "no_tools", "reversed")
    }


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "x", "2-4", "1/2000"])
def test_a_bad_shard_is_a_usage_error(
    suite: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    with pytest.raises(ValueError):
        parse_shard(text)
    code, _, err = cli(suite, capsys, "check", "--shard", text)
    assert code == 2 and "--shard" in err


def test_every_unit_is_in_exactly_one_shard(suite: Path) -> None:
    units = plan_units(load_suite(suite / "fcreplay.toml"))
    for unit in units:
        owners = [
            k for k in range(1, 5) if Shard(k, 4).owns(unit.target.name, unit.variant, unit.case.id)
        ]
        assert len(owners) == 1


def test_four_shards_merged_are_one_unsharded_check(
    suite: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    whole = cli(suite, capsys, "check", "--no-cache")
    logs = shard_logs(suite, capsys)
    merged_path = tmp_path / "merged.jsonl"
    merged = cli(suite, capsys, "merge", *logs, "--output", str(merged_path))
    again = cli(suite, capsys, "check", "--from-run", str(merged_path))
    assert whole[0] == merged[0] == again[0] == 1  # the regression fails all three
    assert body(whole[1]) == body(merged[1]) == body(again[1])
    assert "golden regression: careful/auto/lookup" in merged[1]
    assert records(log_of(whole[1])) == records(merged_path)
    for command in (["golden", "diff", "--format", "json"], ["report", "--format", "json"]):
        one = cli(suite, capsys, *command[:2], "--run", str(log_of(whole[1])), *command[2:])
        other = cli(suite, capsys, *command[:2], "--run", str(merged_path), *command[2:])
        assert one[0] == other[0]
        assert RUN_ID.sub("RUN", one[1]) == RUN_ID.sub("RUN", other[1])


def test_a_shard_compares_only_its_own_golden_entries(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    totals = 0
    for index in range(1, 5):
        _, out, _ = cli(suite, capsys, "check", "--shard", f"{index}/4")
        summary = out.splitlines()[-1]
        assert " 0 missing" in summary, summary
        totals += int(re.search(r"(\d+) attempts replayed", summary).group(1))  # type: ignore[union-attr]
        end = json.loads(log_of(out).read_text(encoding="utf-8").splitlines()[-1])
        assert end["run_end"]["scope"]["shard"] == f"{index}/4"
    assert totals == 56


def test_a_missing_shard_fails_the_merge(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = shard_logs(suite, capsys)
    code, out, err = cli(suite, capsys, "merge", *logs[:1], *logs[2:])
    assert code == 2 and out == ""
    assert "shard 2/4 missing" in err


def test_overlapping_shards_fail_the_merge(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = shard_logs(suite, capsys)
    code, _, err = cli(suite, capsys, "merge", *logs, logs[0])
    assert code == 2 and "overlaps" in err and "shard 1/4" in err
    other = shard_logs(suite, capsys, count=2)
    code, _, err = cli(suite, capsys, "merge", *logs, other[0])
    assert code == 2 and "disagree on their number" in err


def test_a_log_of_other_inputs_is_refused(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = shard_logs(suite, capsys)
    prompt = suite / "contracts" / "delivery_prompt.txt"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nBe brief.\n", encoding="utf-8")
    code, _, err = cli(suite, capsys, "merge", *logs)
    assert code == 2 and "made from other inputs" in err and "prompt" in err


def test_check_from_a_shard_log_gives_that_shard_s_verdict(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shard = cli(suite, capsys, "check", "--no-cache", "--shard", "3/4")
    again = cli(suite, capsys, "check", "--from-run", str(log_of(shard[1])))
    assert shard[0] == again[0] and body(shard[1]) == body(again[1])


def test_check_from_an_unfinished_log_is_refused(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = log_of(cli(suite, capsys, "check")[1])
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[:-1]), encoding="utf-8")  # no run-end: killed
    code, _, err = cli(suite, capsys, "check", "--from-run", str(log))
    assert code == 2 and "did not finish" in err


def test_the_documented_matrix_fans_out_and_merges() -> None:
    yaml = pytest.importorskip("yaml")
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(# .github/workflows/fcreplay-shards.yml.*?)```", text, re.DOTALL)
    assert block is not None
    jobs = yaml.safe_load(block.group(1))["jobs"]
    assert jobs["shard"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    shard_steps = "\n".join(str(step.get("run", "")) for step in jobs["shard"]["steps"])
    assert "fcreplay check --shard ${{ matrix.shard }}/4" in shard_steps
    assert any("upload-artifact" in str(step.get("uses")) for step in jobs["shard"]["steps"])
    assert jobs["verdict"]["needs"] == "shard"
    verdict_steps = "\n".join(str(step.get("run", "")) for step in jobs["verdict"]["steps"])
    assert "fcreplay merge shard-logs/*.jsonl" in verdict_steps
    assert any("download-artifact" in str(step.get("uses")) for step in jobs["verdict"]["steps"])
