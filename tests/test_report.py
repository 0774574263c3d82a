"""`fcreplay report`: JSON in the seed's shape, the CSV error table, Markdown, and one HTML file."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fcreplay.cli import run
from fcreplay.metrics import METRICS
from fcreplay.render.report import ERROR_COLUMNS, build_report
from fcreplay.runlog import RunLogWriter, newest_run_log, read_run_log

from . import browser
from .recorded_suite import edit_argument, recorded_copy, replay
from .records import make_record


@pytest.fixture
def recorded(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return recorded_copy(tmp_path_factory, tmp_path)


def report(suite: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run(["report", *args, "--config", str(suite / "fcreplay.toml")])
    out, err = capsys.readouterr()
    assert code == 0, err
    return code, out


def test_json_has_the_seed_shape_extended_per_variant(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out = report(recorded, capsys, "--format", "json")
    data = json.loads(out)
    assert data["prompt_version"] == "test-prompt-v1"
    assert data["cases_version"] == "test-cases-v1"
    assert len(data["contract_hash"]) == 64
    assert data["run_id"] == newest_run_log(recorded / "runs").stem
    variants = [(r["target"], r["variant"]) for r in data["results"]]
    assert variants == [
        (t, v) for t in ("careful", "hasty") for v in ("auto", "forced", "no_tools", "reversed")
    ]
    for result in data["results"]:
        assert {"provider", "model", "attempted", "transport_errors", *METRICS} <= set(result)
    no_tools = data["results"][2]
    assert no_tools["tool_selection_accuracy"] is None  # no case expects a call there
    assert no_tools["attempted"] == 8 and no_tools["transport_errors"] == 0
    assert data["positional_sensitivity"] == {"careful": 0.0, "hasty": 0.0}


def test_run_is_found_by_id_by_path_and_as_the_newest(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = newest_run_log(recorded / "runs")
    outputs = {
        report(recorded, capsys, *args)[1] for args in ([], [path.stem], [str(path.resolve())])
    }
    assert len(outputs) == 1
    code = run(["report", "no-such-run", "--config", str(recorded / "fcreplay.toml")])
    assert code == 2 and "no run 'no-such-run'" in capsys.readouterr().err


def test_transport_errors_show_apart_and_metrics_without_denominator_are_null(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.jsonl"
    with RunLogWriter(path) as writer:
        writer.append(
            make_record(
                run_id="r1",
                adapter="anthropic",
                case_id="a",
                signature=None,
                verdict="error",
                transport_error={"type": "http_status", "message": "HTTP 503"},
            )
        )
    assert run(["report", str(path), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)["results"][0]
    assert (result["attempted"], result["transport_errors"]) == (1, 1)
    assert all(result[name] is None for name in METRICS)
    assert run(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "1 attempt ended in a transport or provider error" in text
    assert run(["report", str(path), "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows == [
        list(ERROR_COLUMNS),
        ["t", "m", "auto", "a", "1", "0", "transport_error", "", "", "http_status: HTTP 503"],
    ]


def test_csv_has_one_row_per_finding(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out = report(recorded, capsys, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    records = read_run_log(newest_run_log(recorded / "runs")).records
    assert len(rows) == sum(len(r.findings) for r in records)
    unsafe = [r for r in rows if r["code"] == "unsafe_call"]
    assert {(r["target"], r["case_id"], r["path"]) for r in unsafe} == {
        ("hasty", "implicit", "/calls/0/name")
    }
    false_success = next(r for r in rows if r["code"] == "false_success")
    assert false_success["step"] == "1" and "отменён" in false_success["actual"]


def test_text_and_markdown_show_every_target_and_variant(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, text = report(recorded, capsys)
    assert "hasty/auto" in text and "62.5%" in text and "positional sensitivity" in text
    _, markdown = report(recorded, capsys, "--format", "markdown")
    assert "| hasty/auto | 8 | 0 | 62.5% |" in markdown


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_is_one_self_contained_page_with_the_matrix(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    output = tmp_path / "report.html"
    report(recorded, capsys, "--format", "html", "--output", str(output))
    html = output.read_text(encoding="utf-8")
    page = _Page()
    page.feed(html)
    page.close()
    tags = [tag for tag, _ in page.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags
    assert not any("src" in attrs for _, attrs in page.tags)
    links = [attrs["href"] for _, attrs in page.tags if "href" in attrs]
    assert links and all(link and link.startswith("#") for link in links)  # in-page only
    ids = {attrs.get("id") for _, attrs in page.tags}
    assert all(link[1:] in ids for link in links)  # and each lands somewhere
    assert "http://" not in html and "https://" not in html
    classes = [attrs.get("class") for tag, attrs in page.tags if tag in ("table", "td")]
    assert "matrix" in classes and "metrics" in classes
    text = " ".join(page.text)
    for case in ("lookup", "clarify", "cancel", "implicit"):
        assert case in text
    # hasty/auto/implicit failed both repetitions; clarify passed one of two
    assert (
        '<td class="fail" title="hasty/auto/implicit: every attempt has findings">'
        '<a href="#u-hasty--auto--implicit">0/2</a></td>'
    ) in html
    assert 'title="hasty/auto/clarify: some attempts passed, some did not"><a href=' in html
    assert '<section class="unit" id="u-hasty--auto--implicit">' in html
    assert "Errors by case" in html and "<h2>Glossary</h2>" in html
    assert html.count('class="bar"') == sum(
        value is not None
        for result in build_report(read_run_log(newest_run_log(recorded / "runs")).records)[
            "results"
        ]
        for value in (result[name] for name in METRICS)
    )


@pytest.mark.skipif(not browser.available(), reason="Chromium is not installed")
def test_html_drill_down_opens_in_headless_chromium_without_sideways_scrolling(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    # A golden, then a regression against it, so the page has a golden comparison.
    assert (
        run(
            [
                "golden",
                "update",
                "--reason",
                "baseline",
                "--config",
                str(recorded / "fcreplay.toml"),
            ]
        )
        == 0
    )
    edit_argument(recorded / "cassettes" / "careful" / "auto" / "lookup.json", "order_id", "ORD-1")
    replay(recorded)
    capsys.readouterr()
    output = tmp_path / "report.html"
    report(recorded, capsys, "--format", "html", "--output", str(output))
    with browser.chromium(tmp_path / "profile", width=1280, height=900) as page:
        page.open(output.as_uri())
        shown = "[...document.querySelectorAll('section.unit .body')].filter(b => b.offsetHeight)"
        assert page.evaluate(shown + ".length") == 0  # every drill-down starts closed
        page.click("table.matrix td.fail a")
        target = page.wait_for("location.hash")
        assert target.startswith("#u-")
        # The drill-down the cell links to opens: every attempt, turn by turn.
        body = f"document.querySelector({json.dumps(target + ' .body')})"
        assert page.wait_for(f"{body}.offsetHeight > 0")
        assert page.evaluate(shown + ".length") == 1
        shown = page.evaluate(f"{body}.innerText")
        assert "attempt 1" in shown and "sent" in shown and "model" in shown
        assert "finding" in shown or "findings" in shown or "mismatch" in shown
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280, f"the page is {width} px wide in a 1280 px window"
        page.screenshot(tmp_path / "drill-down.png")
        page.open(output.as_uri() + "#u-careful--auto--lookup")
        lookup = "document.querySelector('#u-careful--auto--lookup .body')"
        assert page.wait_for(f"{lookup}.offsetHeight > 0")
        golden = page.evaluate(f"{lookup}.innerText")
        assert "golden: regression" in golden
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        page.call("Runtime.evaluate", expression="window.scrollTo(0, 0)")
        page.screenshot(tmp_path / "top.png")
    assert (tmp_path / "drill-down.png").stat().st_size > 10_000


def test_text_and_markdown_end_with_the_error_table_by_case(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, text = report(recorded, capsys)
    tail = text[text.index("errors (") :]
    # hasty cancels although the case only hints at it: the call is shown, and where it is.
    assert "\n  implicit\n" in tail
    assert "    hasty/auto #1 step 0  unsafe_call: expected " in tail
    assert 'came cancel_order {"order_id":"ORD-654321","reason":"other"}' in tail
    assert "      cassette " in tail and "hasty/auto/implicit.json" in tail
    assert "came «Готово, заказ отменён.»" in tail  # hasty's false success, in its words
    _, markdown = report(recorded, capsys, "--format", "markdown")
    assert "<details><summary>implicit: " in markdown
    assert "| where | code | expected | came | cassette |" in markdown
    assert "`false_success` | not «отменён» | «Готово, заказ отменён.»" in markdown
