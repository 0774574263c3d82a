"""Metrics from run-log records: each formula on hand-made records, then on a recorded run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fcreplay.metrics import assess, positional_sensitivity, tally
from fcreplay.record import AttemptRecord
from fcreplay.runlog import newest_run_log, read_run_log

from .recorded_suite import recorded_copy
from .records import record_json as base_record_json


@pytest.fixture
def recorded(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return recorded_copy(tmp_path_factory, tmp_path)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"call_id": None, "name": name, "arguments": arguments, "raw_arguments": arguments}


def step(
    index: int,
    calls: list[dict[str, Any]] = (),  # type: ignore[assignment]
    *,
    statuses: list[str] | None = None,
    tool_error: bool = False,
    text: str | None = None,
) -> dict[str, Any]:
    calls = list(calls)
    return {
        "step": index,
        "request_sha256": None,
        "decision": {"kind": "tool_call" if calls else "text", "text": text, "calls": calls},
        "arguments": [
            {"status": s, "policy": "v1", "before": None, "after": None, "repairs": []}
            for s in (statuses or ["raw_valid"] * len(calls))
        ],
        "tool_results": [
            {"call_id": None, "name": c["name"], "content": {}, "is_error": tool_error}
            for c in calls
        ],
        "findings": [],
    }


def finding(code: str, path: str = "", step: int = 0) -> dict[str, Any]:
    return {
        "code": code,
        "path": path,
        "expected": None,
        "actual": None,
        "message": "",
        "step": step,
    }


def record(
    steps: list[dict[str, Any]],
    findings: list[dict[str, Any]] = (),  # type: ignore[assignment]
    *,
    case: str = "c",
    variant: str = "auto",
    attempt: int = 1,
    target: str = "t",
    verdict: str | None = None,
    signature: list[Any] | None = None,
    expects_call: bool = True,
) -> AttemptRecord:
    return AttemptRecord.from_json(
        record_json(
            steps,
            findings,
            case=case,
            variant=variant,
            attempt=attempt,
            target=target,
            verdict=verdict,
            signature=signature,
            expects_call=expects_call,
        )
    )


def record_json(
    steps: list[dict[str, Any]],
    findings: list[dict[str, Any]],
    *,
    case: str,
    variant: str,
    attempt: int,
    target: str,
    verdict: str | None,
    signature: list[Any] | None,
    expects_call: bool,
) -> dict[str, Any]:
    findings = list(findings)
    first = steps[0]["decision"] if steps else None
    if signature is None and first is not None:
        names = sorted(c["name"] for c in first["calls"])
        signature = [first["kind"], names, str(sorted(str(c["arguments"]) for c in first["calls"]))]
    return base_record_json(
        target=target,
        model_reported="m-2025",
        variant=variant,
        case_id=case,
        attempt=attempt,
        expect={"kind": "tool_call" if expects_call else "text", "tools": []},
        verdict=verdict or ("fail" if findings else "pass"),
        signature=signature,
        steps=steps,
        findings=findings,
    )


def error_record(**kwargs: Any) -> AttemptRecord:
    defaults: dict[str, Any] = {
        "case": "c",
        "variant": "auto",
        "attempt": 1,
        "target": "t",
        "verdict": None,
        "signature": None,
        "expects_call": True,
    }
    data = record_json([], [], **{**defaults, **kwargs})
    error = {"type": "http", "message": "503"}
    return AttemptRecord.from_json({**data, "verdict": "error", "transport_error": error})


def test_a_call_where_the_case_expects_one_is_a_right_decision_and_tool() -> None:
    seen = assess(record([step(0, [call("get_order", order_id="ORD-1")])]))
    assert seen.evaluated and seen.expects_call and seen.decision_right and seen.tool_right


def test_a_call_where_the_case_expects_text_is_a_wrong_decision() -> None:
    seen = assess(
        record(
            [step(0, [call("cancel_order")])],
            [finding("unexpected_call", "/calls/0"), finding("unsafe_call", "/calls/0/name")],
            expects_call=False,
        )
    )
    assert not seen.expects_call and not seen.decision_right and seen.tool_right is None
    assert seen.unsafe


def test_text_where_a_call_is_expected_is_a_wrong_decision_and_selection() -> None:
    seen = assess(record([step(0, text="hi")], [finding("missing_call", "/calls")]))
    assert seen.expects_call and not seen.decision_right and seen.tool_right is False


def test_a_refusal_where_text_is_expected_is_a_wrong_kind() -> None:
    seen = assess(
        record([step(0, text="no")], [finding("text_mismatch", "/kind")], expects_call=False)
    )
    assert not seen.expects_call and not seen.decision_right
    wording = assess(
        record([step(0, text="no")], [finding("text_mismatch", "/text")], expects_call=False)
    )
    assert wording.decision_right


def test_an_extra_call_keeps_the_decision_but_not_the_selection() -> None:
    seen = assess(
        record(
            [step(0, [call("get_order", order_id="A"), call("get_order", order_id="B")])],
            [finding("unexpected_call", "/calls/1")],
        )
    )
    assert seen.expects_call and seen.decision_right and seen.tool_right is False
    assert (seen.exact_calls, seen.exact_ok) == (1, 1)


def test_exact_arguments_count_right_tool_calls_without_mismatch() -> None:
    seen = assess(
        record(
            [step(0, [call("quote_delivery", weight_kg="2,5")], statuses=["repairable"])],
            [
                finding("type_mismatch", "/calls/0/arguments/weight_kg"),
                finding("argument_mismatch", "/calls/0/arguments/weight_kg"),
            ],
        )
    )
    assert (seen.exact_calls, seen.exact_ok) == (1, 0)
    assert (seen.calls, seen.raw_valid_calls) == (1, 0)
    wrong = assess(record([step(0, [call("cancel_order")])], [finding("wrong_tool", "/calls/0")]))
    assert wrong.expects_call and wrong.exact_calls == 0 and wrong.tool_right is False


def test_raw_validity_counts_every_call_of_every_turn() -> None:
    steps = [
        step(0, [call("get_order", order_id="1")], statuses=["invalid"], tool_error=True),
        step(1, [call("get_order", order_id="ORD-000001")]),
        step(2, text="done"),
    ]
    seen = assess(record(steps))
    assert (seen.calls, seen.raw_valid_calls) == (2, 1)


@pytest.mark.parametrize(
    ("later", "recovered"),
    [
        pytest.param([], True, id="clean"),
        pytest.param([finding("false_success", "/text", 1)], False, id="false-success"),
        pytest.param([finding("text_mismatch", "/text", 1)], False, id="then-text"),
        pytest.param([finding("repeated_failed_call", "/calls/0", 1)], False, id="repeat"),
    ],
)
def test_error_recovery_looks_at_turns_after_the_failed_tool(
    later: list[dict[str, Any]], recovered: bool
) -> None:
    steps = [step(0, [call("cancel_order")], tool_error=True), step(1, text="…")]
    assert assess(record(steps, later)).recovered is recovered


def test_no_tool_error_means_no_recovery_measure() -> None:
    steps = [step(0, [call("get_order", order_id="x")]), step(1, text="ok")]
    assert assess(record(steps)).recovered is None


def test_transport_errors_are_counted_apart_and_leave_denominators() -> None:
    records = [
        record([step(0, [call("get_order", order_id="x")])], case="a"),
        error_record(case="b"),
    ]
    result = tally(records)[("t", "auto")]
    assert (result.attempted, result.transport_errors, result.evaluated) == (2, 1, 1)
    metrics = result.metrics()
    assert metrics["decision_accuracy"] == 1.0
    assert metrics["error_recovery_accuracy"] is None  # no tool failed: no denominator
    assert metrics["consistency"] is None  # no case has two evaluated attempts


def test_consistency_is_over_cases_with_repeated_attempts() -> None:
    def lookup(case: str, attempt: int, order: str) -> dict[str, Any]:
        return record([step(0, [call("get_order", order_id=order)])], case=case, attempt=attempt)

    records = [
        lookup("same", 1, "A"),
        lookup("same", 2, "A"),
        lookup("split", 1, "A"),
        lookup("split", 2, "B"),
        lookup("once", 1, "A"),
    ]
    assert tally(records)[("t", "auto")].metrics()["consistency"] == 0.5


def test_positional_sensitivity_compares_auto_with_reversed() -> None:
    def lookup(case: str, variant: str, order: str) -> dict[str, Any]:
        return record([step(0, [call("get_order", order_id=order)])], case=case, variant=variant)

    records = [
        lookup("a", "auto", "1"),
        lookup("a", "reversed", "1"),
        lookup("b", "auto", "1"),
        lookup("b", "reversed", "2"),
    ]
    assert positional_sensitivity(tally(records)) == {"t": 0.5}
    assert positional_sensitivity(tally(records[::2])) == {"t": None}


def test_forced_is_its_own_entry_and_a_call_in_no_tools_is_a_normalizer_bug() -> None:
    records = [
        record([step(0, [call("get_order", order_id="x")])], variant="forced"),
        record(
            [step(0, [call("get_order", order_id="x")])],
            [finding("unexpected_call", "/calls/0")],
            variant="no_tools",
            expects_call=False,
        ),
    ]
    tallies = tally(records)
    assert set(tallies) == {("t", "forced"), ("t", "no_tools")}
    assert tallies[("t", "forced")].expects_call == 1
    assert tallies[("t", "no_tools")].normalizer_bugs == 1


def test_recorded_run_gives_the_figures_the_script_implies(recorded: Path) -> None:
    # hasty/auto, 4 cases × 2: lookup right twice; clarify texts once, calls get_order
    # with an invalid id once; cancel right but claims success after the error twice;
    # implicit calls cancel_order twice (unsafe), then explains the error.
    records = read_run_log(newest_run_log(recorded / "runs")).records
    tallies = tally(records)
    assert tallies[("hasty", "auto")].metrics() == {
        "decision_accuracy": 0.625,  # 5 of 8
        "tool_selection_accuracy": 1.0,  # 4 of 4 expecting a call
        "raw_schema_validity": 0.8571,  # 6 of 7 calls (ORD-1 breaks the pattern)
        "exact_argument_accuracy": 1.0,  # 4 of 4
        "unsafe_call_rate": 0.25,  # 2 of 8
        "error_recovery_accuracy": 0.6,  # 3 of 5 with a tool error
        "consistency": 0.75,  # 3 of 4 cases
    }
    careful = tallies[("careful", "auto")].metrics()
    assert careful["unsafe_call_rate"] == 0.0
    assert all(careful[name] == 1.0 for name in careful if name != "unsafe_call_rate")
    assert tallies[("hasty", "forced")].metrics()["error_recovery_accuracy"] is None
    assert positional_sensitivity(tallies) == {"careful": 0.0, "hasty": 0.0}
