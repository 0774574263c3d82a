"""Case tags in the run log and metrics per tag: a figure never mixes two tags' cases."""

from __future__ import annotations

from fcreplay.metrics import tally_by_tag
from fcreplay.record import AttemptRecord
from fcreplay.render.report import build_report, render, render_text

from .records import make_record, record_json


def test_tags_are_written_only_when_the_case_has_some() -> None:
    plain = make_record()
    assert "tags" not in plain.to_json() and plain.tags == ()
    tagged = make_record(tags=["ru", "positive"])
    assert tagged.to_json()["tags"] == ["ru", "positive"]
    assert AttemptRecord.from_json(tagged.to_json()) == tagged
    assert AttemptRecord.from_json(record_json()) == plain  # older logs read the same


def test_each_tag_has_its_own_figures() -> None:
    records = [
        make_record(case_id="a", tags=["ru"], verdict="pass"),
        make_record(case_id="b", tags=["uk"], signature=["tool_call", ["x"], "[{}]"]),
        make_record(case_id="c", tags=["ru", "uk"]),
    ]
    tallies = tally_by_tag(records)
    assert [key[0] for key in tallies] == ["ru", "uk"]
    assert tallies[("ru", "t", "auto")].cases == {"a", "c"}
    assert tallies[("uk", "t", "auto")].cases == {"b", "c"}
    report = build_report(records, by_tag=True)
    by_tag = {entry["tag"]: entry for entry in report["by_tag"]}
    assert by_tag["ru"]["decision_accuracy"] == 1.0
    assert by_tag["uk"]["decision_accuracy"] == 0.5  # b called a tool where text was expected
    # The overall figures stay as they were, and check's table has no per-tag part.
    assert "by_tag" not in build_report(records)
    assert "per tag" not in render_text(build_report(records))
    assert "ru: t/auto" in render(records, "text")
    assert "**per tag**" in render(records, "markdown")
    html = render(records, "html")
    assert "Metrics per tag" in html and "Glossary" in html and "<td>uk</td>" in html
