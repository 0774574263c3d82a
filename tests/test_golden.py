"""Golden baselines: stable files, selective updates, and the classes of `golden diff`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from fcreplay.golden.diff import classify
from fcreplay.golden.store import GoldenEntry, SignatureCount

from .recorded_suite import cli, edit_argument, recorded_copy, replay


@pytest.fixture
def recorded(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return recorded_copy(tmp_path_factory, tmp_path)


LOOKUP: list[Any] = ["tool_call", ["get_order"], '[{"order_id":"ORD-123456"}]']
OTHER: list[Any] = ["tool_call", ["get_order"], '[{"order_id":"ORD-999999"}]']
TEXT: list[Any] = ["text", [], "[]"]


def update(suite: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = cli(suite, capsys, "golden", "update", *args)
    assert code == 0, err
    return out


def entries(path: Path) -> dict[tuple[str, str], dict[str, object]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return {
        (case, variant): entry
        for case, variants in document["entries"].items()
        for variant, entry in variants.items()
    }


def test_update_writes_versioned_sorted_files_that_a_rerun_leaves_byte_identical(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = replay(recorded)
    update(recorded, capsys, "--run", first.run_id, "--reason", "first baseline")
    path = recorded / "golden" / "careful.json"
    text = path.read_text(encoding="utf-8")
    document = json.loads(text)
    assert document["fcreplay_golden"] == 1 and document["target"] == "careful"
    assert text == json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    lookup = document["entries"]["lookup"]["auto"]
    assert lookup["verdict"] == "pass" and lookup["verdicts"] == {"pass": 2}
    assert lookup["signatures"] == [
        {
            "signature": LOOKUP,
            "count": 2,
            "kind": "tool_call",
            "calls": [{"name": "get_order", "arguments": {"order_id": "ORD-123456"}}],
        }
    ]
    provenance = lookup["provenance"]
    assert provenance["run_id"] == first.run_id and provenance["reason"] == "first baseline"
    assert provenance["model"] == "sim-careful" and provenance["model_reported"] == "sim-careful"
    assert provenance["fcreplay_version"] and provenance["recorded_at"].endswith("Z")
    hasty = entries(recorded / "golden" / "hasty.json")
    assert hasty[("cancel", "auto")]["findings"] == ["false_success", "text_mismatch"]
    assert hasty[("clarify", "auto")]["verdicts"] == {"fail": 1, "pass": 1}

    second = replay(recorded)
    out = update(recorded, capsys, "--run", second.run_id, "--reason", "again")
    assert path.read_text(encoding="utf-8") == text
    assert "0 entries changed" in out


def test_update_of_one_case_changes_only_that_case(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    update(recorded, capsys, "--run", replay(recorded).run_id, "--reason", "baseline")
    folder = recorded / "golden"
    before = {
        name: (folder / name).read_text(encoding="utf-8") for name in ("careful.json", "hasty.json")
    }
    cassettes = recorded / "cassettes" / "careful" / "auto"
    edit_argument(cassettes / "lookup.json", "order_id", "ORD-123457")
    edit_argument(cassettes / "cancel.json", "reason", "other")
    changed = replay(recorded).run_id
    args = ["--run", changed, "--case", "lookup", "--reason", "accept the new lookup"]
    out = update(recorded, capsys, *args)
    assert "updated careful/auto/lookup" in out and "1 entry changed" in out
    after = entries(folder / "careful.json")
    old = json.loads(before["careful.json"])["entries"]
    differing = {key for key, entry in after.items() if old[key[0]][key[1]] != entry}
    assert differing == {("lookup", "auto")}
    assert after[("lookup", "auto")]["provenance"]["run_id"] == changed  # type: ignore[index]
    assert (folder / "hasty.json").read_text(encoding="utf-8") == before["hasty.json"]
    text = (folder / "careful.json").read_text(encoding="utf-8")
    update(recorded, capsys, *args)
    assert (folder / "careful.json").read_text(encoding="utf-8") == text

    code, out, _ = cli(recorded, capsys, "golden", "diff", "--run", changed)
    assert code == 1
    assert "careful/auto/cancel  regression" in out
    assert '/calls/0/arguments/reason: "changed_mind" -> "other"' in out
    assert "careful/auto/lookup" not in out


def test_diff_is_clean_and_exits_zero_when_nothing_changed(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    update(recorded, capsys, "--run", replay(recorded).run_id, "--reason", "baseline")
    run_id = replay(recorded).run_id
    code, out, _ = cli(recorded, capsys, "golden", "diff", "--run", run_id, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["diffs"] == [] and data["counts"]["unchanged"] == 28  # (4 cases × 3 + 2 forced) × 2
    code, out, _ = cli(recorded, capsys, "golden", "diff", "--run", run_id, "--format", "junit")
    suites = ET.fromstring(out)
    assert suites.get("tests") == "28" and suites.get("failures") == "0"


def test_new_and_missing_entries_and_prune(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_id = replay(recorded).run_id
    update(recorded, capsys, "--run", run_id, "--target", "careful", "--reason", "baseline")
    path = recorded / "golden" / "careful.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["entries"]["gone"] = {"auto": document["entries"]["lookup"]["auto"]}
    del document["entries"]["clarify"]["auto"]
    path.write_text(json.dumps(document), encoding="utf-8")
    code, out, _ = cli(recorded, capsys, "golden", "diff", "--run", run_id, "--format", "json")
    assert code == 1
    classes = {
        (d["target"], d["case_id"], d["variant"]): d["class"] for d in json.loads(out)["diffs"]
    }
    assert classes[("careful", "gone", "auto")] == "missing"
    assert classes[("careful", "clarify", "auto")] == "new"
    assert all(v == "new" for k, v in classes.items() if k[0] == "hasty")  # no golden file yet
    code, out, _ = cli(recorded, capsys, "golden", "diff", "--run", run_id, "--format", "junit")
    junit = ET.fromstring(out)
    assert junit.get("failures") == str(len(classes))
    failure = junit.find(".//testcase[@name='gone [auto]']/failure")
    assert failure is not None and failure.get("type") == "missing"

    update(recorded, capsys, "--run", run_id, "--target", "careful", "--prune", "--reason", "p")
    pruned = entries(path)
    assert ("gone", "auto") not in pruned and ("clarify", "auto") in pruned


def test_unknown_case_and_newer_golden_format_are_input_errors(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_id = replay(recorded).run_id
    code, _, err = cli(recorded, capsys, "golden", "update", "--case", "nope", "--reason", "x")
    assert code == 2 and "--case 'nope'" in err
    update(recorded, capsys, "--run", run_id, "--reason", "baseline")
    path = recorded / "golden" / "careful.json"
    path.write_text(
        path.read_text(encoding="utf-8").replace('"fcreplay_golden": 1', '"fcreplay_golden": 2')
    )
    code, _, err = cli(recorded, capsys, "golden", "diff", "--run", run_id)
    assert code == 2 and "golden format 2" in err and "fcreplay golden update" in err


def entry(
    verdict: str, *signatures: tuple[list[Any], int], findings: tuple[str, ...] = ()
) -> GoldenEntry:
    return GoldenEntry(
        verdict,
        ((verdict, sum(n for _, n in signatures)),),
        tuple(SignatureCount(s, n) for s, n in signatures),
        findings,
    )


@pytest.mark.parametrize(
    ("golden", "now", "expected"),
    [
        pytest.param(entry("pass", (LOOKUP, 3)), entry("pass", (LOOKUP, 3)), None, id="same"),
        pytest.param(entry("pass", (LOOKUP, 3)), entry("fail", (OTHER, 3)), "regression", id="reg"),
        pytest.param(entry("fail", (OTHER, 3)), entry("pass", (LOOKUP, 3)), "fix", id="fix"),
        pytest.param(entry("fail", (OTHER, 3)), entry("fail", (TEXT, 3)), "changed", id="other"),
        pytest.param(
            entry("fail", (OTHER, 3), findings=("argument_mismatch",)),
            entry("fail", (OTHER, 3), findings=("false_success",)),
            "changed",
            id="findings",
        ),
        pytest.param(
            entry("fail", (OTHER, 3)), entry("fail", (OTHER, 2), (TEXT, 1)), "flaky", id="split"
        ),
        pytest.param(
            entry("fail", (OTHER, 2), (TEXT, 1)),
            entry("fail", (OTHER, 1), (TEXT, 2)),
            "flaky",
            id="moved",
        ),
        pytest.param(None, entry("pass", (LOOKUP, 3)), "new", id="new"),
        pytest.param(entry("pass", (LOOKUP, 3)), None, "missing", id="missing"),
    ],
)
def test_classes(golden: GoldenEntry | None, now: GoldenEntry | None, expected: str | None) -> None:
    assert classify(golden, now) == expected
