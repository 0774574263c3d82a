"""The Python API beside the CLI: the same operations and result objects, typed."""

from __future__ import annotations

from pathlib import Path

import pytest

import fcreplay
from fcreplay.inputs.contract import Contract

from .recorded_suite import edit_argument, recorded_copy


@pytest.fixture
def suite_path(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return recorded_copy(tmp_path_factory, tmp_path)


def test_replay_check_and_golden_through_the_api(suite_path: Path) -> None:
    suite = fcreplay.load_suite(suite_path / "fcreplay.toml")
    assert isinstance(suite, fcreplay.Suite)
    run = fcreplay.replay_suite(suite, targets=["careful"])
    assert isinstance(run, fcreplay.RunResult) and run.records
    assert {r.target for r in run.records} == {"careful"}
    # A first baseline from the run, then a check against it passes.
    results = fcreplay.golden_update(run, suite, reason="first baseline")
    assert results and all(result.written for result in results)
    assert fcreplay.golden_diff(run.log_path, suite).clean
    edit_argument(
        suite_path / "cassettes" / "careful" / "auto" / "lookup.json", "order_id", "ORD-999999"
    )
    checked = fcreplay.check_suite(fcreplay.load_suite(suite_path / "fcreplay.toml"))
    assert isinstance(checked, fcreplay.CheckResult) and not checked.ok
    assert "drift" in checked.failures or "regression" in checked.failures
    diff = fcreplay.golden_diff(checked.run, suite_path / "golden")
    assert isinstance(diff, fcreplay.GoldenDiff)
    assert fcreplay.run_records(checked.run) == checked.run.records
    with pytest.raises(ValueError, match="reason"):
        fcreplay.golden_update(run, suite, reason=" ")


def test_schema_diff_through_the_api(suite_path: Path) -> None:
    result = fcreplay.schema_diff(fcreplay.load_suite(suite_path / "fcreplay.toml"))
    assert isinstance(result, fcreplay.SchemaDiffResult) and result.requests > 0


def test_validators_take_the_jsonl_dict(contract: Contract) -> None:
    call = fcreplay.ToolCall("c1", "get_order", {"order_id": "ORD-1"}, '{"order_id": "ORD-1"}')
    expect = {"kind": "tool_call", "tool": "get_order", "arguments": {"order_id": "ORD-123456"}}
    as_dict = fcreplay.validate_call(call, contract, expect)
    typed = fcreplay.validate_call(call, contract, fcreplay.parse_expectation(expect, contract))
    assert as_dict == typed
    assert {f.code for f in as_dict} >= {"argument_mismatch"}
    decision = fcreplay.Decision("tool_call", calls=(call,), stop="tool_call")
    assert fcreplay.validate_decision(decision, expect, contract) == fcreplay.validate_decision(
        decision, fcreplay.parse_expectation(expect, contract), contract
    )
    with pytest.raises(ValueError, match="kind must be"):
        fcreplay.validate_decision(decision, {"kind": "maybe"}, contract)
