"""`fcreplay check`: replay + schema diff + golden diff + fail-on, and what it prints."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fcreplay.inputs.suite import Suite
from fcreplay.metrics import METRICS
from fcreplay.render.report_figures import rate
from fcreplay.schemadiff.differ import SchemaDiffer
from fcreplay.schemadiff.result import SchemaDiffEntry, SchemaDiffResult
from fcreplay.structdiff import MISSING

from .conftest import ROOT
from .recorded_suite import cli, edit_argument, edit_text, recorded_copy, replay


@pytest.fixture
def recorded(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return recorded_copy(tmp_path_factory, tmp_path)


HINT = "run `fcreplay golden diff --format markdown` for details"


class StandInSchemaDiff:
    """Stands in for the schema diff's result, recording which suite check diffed."""

    def __init__(self, blocking: tuple[SchemaDiffEntry, ...] = ()) -> None:
        self.blocking = blocking
        self.calls: list[Suite] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        stand_in = self

        def result(differ: SchemaDiffer, read_back: Any = None) -> Any:
            return stand_in(differ.suite)

        monkeypatch.setattr(SchemaDiffer, "result", result)

    def __call__(self, suite: Suite, **kwargs: Any) -> SchemaDiffResult:
        self.calls.append(suite)
        return SchemaDiffResult(self.blocking, requests=1, blocking=self.blocking, cassettes=1)


PATTERN_LOST = SchemaDiffEntry(
    target="hasty",
    tool="cancel_order",
    pointer="/cancel_order/parameters/properties/order_id/pattern",
    kind="constraint_lost",
    contract="^ORD-[0-9]{6}$",
    sent=MISSING,
    count=1,
    example="cassettes/hasty/auto/cancel.json",
    documented=False,
    status="blocking",
)


@pytest.fixture
def schema(monkeypatch: pytest.MonkeyPatch) -> StandInSchemaDiff:
    stand_in = StandInSchemaDiff()
    stand_in.install(monkeypatch)
    return stand_in


def baseline(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(
        suite, capsys, "golden", "update", "--run", replay(suite).run_id, "--reason", "baseline"
    )
    assert code == 0, err


def check_run_id(out: str) -> str:
    match = re.search(r"^replayed run (\S+)", out, re.MULTILINE)
    assert match, out
    return match.group(1)


def test_check_passes_when_the_goldens_match_the_cassettes(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    schema: StandInSchemaDiff,
) -> None:
    baseline(recorded, capsys)
    code, out, err = cli(recorded, capsys, "check")
    assert code == 0, out + err
    last = out.rstrip("\n").splitlines()[-1]
    assert last.startswith("check passed: 56 attempts replayed, 0 drift")
    assert "28 unchanged" in last and last.endswith(HINT)
    assert len(schema.calls) == 1 and schema.calls[0].config.source.name == "fcreplay.toml"


def test_check_with_the_real_schema_diff(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    baseline(recorded, capsys)
    code, out, err = cli(recorded, capsys, "check")
    assert code == 0, out + err
    assert "0 blocking schema differences" in out


def test_an_edited_argument_fails_check_and_the_markdown_names_it(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    schema: StandInSchemaDiff,
) -> None:
    baseline(recorded, capsys)
    edit_argument(
        recorded / "cassettes" / "careful" / "auto" / "lookup.json", "order_id", "ORD-123457"
    )
    code, out, _ = cli(recorded, capsys, "check")
    assert code == 1
    last = out.rstrip("\n").splitlines()[-1]
    assert last.startswith("check FAILED on 1 regression") and last.endswith(HINT)
    assert "golden regression: careful/auto/lookup" in out
    run_id = check_run_id(out)
    code, markdown, _ = cli(
        recorded, capsys, "golden", "diff", "--run", run_id, "--format", "markdown"
    )
    assert code == 1
    summary, *_ = markdown.splitlines()
    assert summary.startswith("**fcreplay golden diff** (1 regression; 27 unchanged)")
    assert "### Regressions: 1 entry in 1 cases" in markdown
    assert "| lookup | auto × careful | pass · get_order" in markdown
    assert '| `/calls/0/arguments/order_id` | `"ORD-123456"` | `"ORD-123457"` |' in markdown
    assert "<details><summary><b>lookup</b>: regression in 1 entry</summary>" in markdown
    # The new finding comes with its evidence: the call's arguments and the cassette.
    assert '  - call: `get_order {"order_id":"ORD-123457"}`' in markdown
    assert "cassettes/careful/auto/lookup.json`" in markdown


def test_check_prints_the_figures_the_report_recomputes_from_its_run_log(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    schema: StandInSchemaDiff,
) -> None:
    baseline(recorded, capsys)
    _, out, _ = cli(recorded, capsys, "check")
    rows = {
        line.split()[0]: line.split()[1:]
        for line in out.splitlines()
        if re.match(r"^(careful|hasty)/\w+ ", line)
    }
    log = recorded / "runs" / f"{check_run_id(out)}.jsonl"
    code, report, _ = cli(recorded, capsys, "report", str(log), "--format", "json")
    assert code == 0
    results = json.loads(report)["results"]
    assert len(rows) == len(results) == 8
    for result in results:
        expected = [str(result["attempted"]), str(result["transport_errors"])]
        expected += [rate(result[name]) for name in METRICS]
        assert rows[f"{result['target']}/{result['variant']}"] == expected
    assert rows["hasty/auto"][2:] == [
        "62.5%",
        "100.0%",
        "85.7%",
        "100.0%",
        "25.0%",
        "60.0%",
        "75.0%",
    ]


def test_fail_on_selects_what_fails(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    schema: StandInSchemaDiff,
) -> None:
    code, out, _ = cli(recorded, capsys, "check")
    assert code == 1 and "check FAILED on 28 new" in out  # no golden files yet
    assert cli(recorded, capsys, "check", "--fail-on", "regression")[0] == 0
    baseline(recorded, capsys)
    assert cli(recorded, capsys, "check")[0] == 0
    code, out, _ = cli(recorded, capsys, "check", "--fail-on", "unsafe")
    assert code == 1 and "check FAILED on 4 unsafe" in out  # hasty/implicit, auto + reversed
    schema.blocking = (PATTERN_LOST,)
    # The stand-in changes the schema diff with no input changed: past the check cache.
    code, out, _ = cli(recorded, capsys, "check", "--no-cache")
    assert code == 1 and "check FAILED on 1 schema" in out
    assert "schema-diff: 1 blocking differences (constraint_lost)" in out
    assert "BLOCKING  hasty  cancel_order  /cancel_order/parameters/properties/order_id" in out
    assert cli(recorded, capsys, "check", "--fail-on", "regression,drift")[0] == 0
    code, _, err = cli(recorded, capsys, "check", "--fail-on", "regression,typo")
    assert code == 2 and "unknown reason 'typo'" in err


def test_a_missing_cassette_is_drift(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    schema: StandInSchemaDiff,
) -> None:
    baseline(recorded, capsys)
    (recorded / "cassettes" / "hasty" / "reversed" / "lookup.json").unlink()
    code, out, _ = cli(recorded, capsys, "check")
    assert code == 1
    first, *_ = out.splitlines()
    command = "fcreplay record --target hasty --variant reversed --case lookup"
    assert first == f"stale: 1 unit, there is no recording; re-record it with: {command}"
    assert "check FAILED on 1 stale, 2 drift" in out
    assert "drift: hasty/reversed/lookup (2 attempts): no cassette" in out
    assert "golden regression" not in out  # a missing recording says nothing of the model


def test_the_documented_ci_workflow_runs_check_and_comments_the_markdown() -> None:
    yaml = pytest.importorskip("yaml")
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", text, re.DOTALL)
    assert block is not None
    workflow = yaml.safe_load(block.group(1))
    steps = workflow["jobs"]["check"]["steps"]
    commands = "\n".join(str(step.get("run", "")) for step in steps)
    assert "fcreplay check" in commands
    assert "fcreplay golden diff --format markdown --output golden-diff.md" in commands
    assert "gh pr comment" in commands and "--body-file golden-diff.md" in commands
    assert workflow["permissions"]["pull-requests"] == "write"
    # The capped comment points to the whole diff, which the workflow keeps.
    assert "--full-output golden-diff-full.md" in commands
    (upload,) = [step for step in steps if "upload-artifact" in str(step.get("uses"))]
    assert "golden-diff-full.md" in upload["with"]["path"]


def test_a_false_success_shows_the_models_words_and_the_cassette_in_markdown(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    schema: StandInSchemaDiff,
) -> None:
    baseline(recorded, capsys)
    cassette = recorded / "cassettes" / "careful" / "auto" / "cancel.json"
    # The answer after the failed cancellation (attempt 1, step 1) now claims success.
    edit_text(cassette, "Готово, заказ отменён. Что-нибудь ещё?", interaction=1)
    code, out, _ = cli(recorded, capsys, "check")
    assert code == 1 and "golden regression: careful/auto/cancel" in out
    code, markdown, _ = cli(recorded, capsys, "golden", "diff", "--format", "markdown")
    assert "| cancel | auto × careful |" in markdown
    assert (
        "- `false_success` at careful/auto/cancel #1 step 1: the answer claims success" in markdown
    )
    assert "  - model said: «Готово, заказ **отменён**. Что-нибудь ещё?»" in markdown
    assert f"  - cassette `{cassette}`" in markdown
    code, text, _ = cli(recorded, capsys, "golden", "diff")
    assert "model said: «Готово, заказ отменён. Что-нибудь ещё?» — cassette " in text
    code, junit, _ = cli(recorded, capsys, "golden", "diff", "--format", "junit")
    assert "model said: «Готово, заказ отменён." in junit
