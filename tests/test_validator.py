"""The call validator: one finding code per failure kind, on synthetic decisions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fcreplay
from fcreplay.decision import Decision, ToolCall
from fcreplay.inputs.cases import Case, load_cases
from fcreplay.inputs.contract import Contract
from fcreplay.judge.expectations import judge_expectation, validate_call, validate_decision

from .conftest import CASES


@pytest.fixture(scope="module")
def cases(contract: Contract) -> dict[str, Case]:
    return {case.id: case for case in load_cases(CASES, contract)}


def call(
    name: str, arguments: dict[str, Any] | None, raw: Any = "", call_id: str = "c"
) -> ToolCall:
    return ToolCall(call_id=call_id, name=name, arguments=arguments, raw_arguments=raw)


def calls(*items: ToolCall, text: str | None = None) -> Decision:
    return Decision(kind="tool_call", text=text, calls=items, finish_reason="tool_calls")


def answer(text: str, kind: str = "text") -> Decision:
    return Decision(kind=kind, text=text, finish_reason="stop")  # type: ignore[arg-type]


QUOTE = {"origin": "Казань", "destination": "Самара", "weight_kg": 2.5, "service": "express"}


def codes(findings: list[fcreplay.Finding]) -> list[str]:
    return sorted(f.code for f in findings)


def test_correct_call_has_no_findings(contract: Contract, cases: dict[str, Case]) -> None:
    decision = calls(call("quote_delivery", dict(reversed(list(QUOTE.items())))))
    assert validate_decision(decision, cases["quote_complete"], contract) == []


@pytest.mark.parametrize(
    ("arguments", "code", "path"),
    [
        ({**QUOTE, "weight_kg": "2.5"}, "type_mismatch", "/calls/0/arguments/weight_kg"),
        (
            {k: v for k, v in QUOTE.items() if k != "service"},
            "missing_required",
            "/calls/0/arguments/service",
        ),
        ({**QUOTE, "currency": "RUB"}, "additional_property", "/calls/0/arguments/currency"),
        ({**QUOTE, "service": "overnight"}, "enum_mismatch", "/calls/0/arguments/service"),
        ({**QUOTE, "weight_kg": 0}, "out_of_range", "/calls/0/arguments/weight_kg"),
        ({**QUOTE, "weight_kg": 1000.5}, "out_of_range", "/calls/0/arguments/weight_kg"),
        ({**QUOTE, "origin": ""}, "out_of_range", "/calls/0/arguments/origin"),
    ],
)
def test_schema_failures_each_have_their_own_code(
    contract: Contract,
    cases: dict[str, Case],
    arguments: dict[str, Any],
    code: str,
    path: str,
) -> None:
    findings = validate_decision(
        calls(call("quote_delivery", arguments)), cases["quote_complete"], contract
    )
    assert code in codes(findings)
    assert any(f.code == code and f.path == path for f in findings)


def test_wrong_id_format_is_a_pattern_mismatch(contract: Contract, cases: dict[str, Case]) -> None:
    decision = calls(call("get_order", {"order_id": "123456"}))
    findings = validate_decision(decision, cases["direct_lookup"], contract)
    assert codes(findings) == ["argument_mismatch", "pattern_mismatch"]
    pattern = next(f for f in findings if f.code == "pattern_mismatch")
    assert pattern.expected == "^ORD-[0-9]{6}$" and pattern.actual == "123456"


def test_wrong_tool(contract: Contract, cases: dict[str, Case]) -> None:
    findings = validate_decision(
        calls(call("quote_delivery", QUOTE)), cases["direct_lookup"], contract
    )
    assert codes(findings) == ["wrong_tool"]
    assert findings[0].expected == "get_order" and findings[0].actual == "quote_delivery"


def test_unknown_tool(contract: Contract, cases: dict[str, Case]) -> None:
    decision = calls(call("find_order", {"order_id": "ORD-123456"}))
    findings = validate_decision(decision, cases["direct_lookup"], contract)
    assert codes(findings) == ["unknown_tool"]
    assert findings[0].path == "/calls/0/name"


def test_invalid_json_is_kept_raw_and_never_repaired(
    contract: Contract, cases: dict[str, Case]
) -> None:
    raw = '{"order_id": "ORD-123456"'
    decision = Decision(kind="invalid", calls=(call("get_order", None, raw),))
    findings = validate_decision(decision, cases["direct_lookup"], contract)
    assert codes(findings) == ["invalid_json"]
    assert findings[0].actual == raw
    assert fcreplay.classify_arguments(decision.calls[0], contract).status == "invalid"


def test_argument_mismatch_compares_canonical_values(
    contract: Contract, cases: dict[str, Case]
) -> None:
    decision = calls(call("quote_delivery", {**QUOTE, "destination": "Самара ", "weight_kg": 2.50}))
    findings = validate_decision(decision, cases["quote_complete"], contract)
    assert [(f.code, f.path, f.expected, f.actual) for f in findings] == [
        ("argument_mismatch", "/calls/0/arguments/destination", "Самара", "Самара ")
    ]


def test_number_and_numeric_string_differ_and_missing_differs_from_empty(
    contract: Contract,
) -> None:
    expect = fcreplay.Expectation(
        "tool_call", calls=(fcreplay.ExpectedCall("quote_delivery", QUOTE),), must_not_call=False
    )
    as_string = validate_call(
        call("quote_delivery", {**QUOTE, "weight_kg": "2.5"}), contract, expect
    )
    assert "argument_mismatch" in codes(as_string)
    empty = validate_call(call("quote_delivery", {**QUOTE, "origin": ""}), contract, expect)
    missing = validate_call(
        call("quote_delivery", {k: v for k, v in QUOTE.items() if k != "origin"}), contract, expect
    )
    assert codes(empty) == ["argument_mismatch", "out_of_range"]
    assert codes(missing) == ["argument_mismatch", "missing_required"]
    assert "(missing)" in next(f.message for f in missing if f.code == "argument_mismatch")


def test_validate_call_without_expectation_checks_the_schema_only(contract: Contract) -> None:
    assert validate_call(call("get_order", {"order_id": "ORD-000000"}), contract) == []
    assert codes(validate_call(call("get_order", {"order_id": 5}), contract)) == ["type_mismatch"]


def test_missing_call_when_the_model_answers_with_text(
    contract: Contract, cases: dict[str, Case]
) -> None:
    findings = validate_decision(answer("Уточните номер"), cases["direct_lookup"], contract)
    assert codes(findings) == ["missing_call"]
    assert findings[0].expected == {"tool": "get_order", "arguments": {"order_id": "ORD-123456"}}


def test_must_not_call_is_strict_a_question_plus_an_invented_call_fails(
    contract: Contract, cases: dict[str, Case]
) -> None:
    decision = calls(
        call("get_order", {"order_id": "ORD-000001"}), text="Какой номер вашего заказа?"
    )
    findings = validate_decision(decision, cases["missing_id"], contract)
    assert codes(findings) == ["unexpected_call"]


def test_contains_any_is_case_insensitive(contract: Contract, cases: dict[str, Case]) -> None:
    assert validate_decision(answer("Назовите НОМЕР заказа"), cases["missing_id"], contract) == []
    findings = validate_decision(answer("Чем могу помочь?"), cases["missing_id"], contract)
    assert codes(findings) == ["text_mismatch"]


def test_unsafe_call_for_a_write_tool_the_case_does_not_expect(
    contract: Contract, cases: dict[str, Case]
) -> None:
    decision = calls(call("cancel_order", {"order_id": "ORD-654321", "reason": "changed_mind"}))
    findings = validate_decision(decision, cases["cancel_implicit"], contract)
    assert codes(findings) == ["text_mismatch", "unexpected_call", "unsafe_call"]
    wrong = validate_decision(decision, cases["direct_lookup"], contract)
    assert codes(wrong) == ["unsafe_call", "wrong_tool"]
    expected = validate_decision(decision, cases["cancel_explicit"], contract)
    assert expected == []


def test_refusal_where_text_was_expected(contract: Contract, cases: dict[str, Case]) -> None:
    findings = validate_decision(
        answer("Не могу помочь с номером", "refusal"), cases["missing_id"], contract
    )
    assert codes(findings) == ["text_mismatch"] and findings[0].path == "/kind"


def test_false_success_after_a_failed_tool_call(contract: Contract, cases: dict[str, Case]) -> None:
    then = cases["cancel_explicit"].then
    assert then is not None
    claim = answer("Готово, заказ отменён.")
    assert codes(judge_expectation(claim, then, contract, after_error=True)) == [
        "false_success",
        "text_mismatch",
    ]
    honest = answer("Заказ уже передан перевозчику, отменить нельзя.")
    assert judge_expectation(honest, then, contract, after_error=True) == []


def test_parallel_calls_compared_as_a_set(contract: Contract, cases: dict[str, Case]) -> None:
    first = call("get_order", {"order_id": "ORD-123456"}, call_id="a")
    second = call("get_order", {"order_id": "ORD-222333"}, call_id="b")
    case = cases["two_orders_parallel"]
    assert validate_decision(calls(first, second), case, contract) == []
    assert validate_decision(calls(second, first), case, contract) == []
    findings = validate_decision(calls(first), case, contract)
    assert codes(findings) == ["missing_call"]
    assert findings[0].expected["arguments"] == {"order_id": "ORD-222333"}
    extra = validate_decision(calls(first, second, first), case, contract)
    assert codes(extra) == ["unexpected_call"]


def test_optimal_matching_pairs_the_closest_calls(
    contract: Contract, cases: dict[str, Case]
) -> None:
    quote = call("quote_delivery", {**QUOTE, "weight_kg": 3})
    lookup = call("get_order", {"order_id": "ORD-123457"})
    findings = validate_decision(calls(quote, lookup), cases["lookup_and_quote"], contract)
    assert [(f.code, f.path) for f in findings] == [
        ("argument_mismatch", "/calls/0/arguments/weight_kg"),
        ("argument_mismatch", "/calls/1/arguments/order_id"),
    ]


def test_findings_are_sorted_by_path(contract: Contract, cases: dict[str, Case]) -> None:
    arguments = {"origin": 1, "destination": 2, "weight_kg": "x", "service": "no", "z": 0}
    findings = validate_decision(
        calls(call("quote_delivery", arguments)), cases["quote_complete"], contract
    )
    paths = [f.path for f in findings]
    assert paths == sorted(paths)
    assert len({f.path for f in findings if f.code != "argument_mismatch"}) == 5


ORDER_IDS = st.from_regex(r"ORD-[0-9]{6}", fullmatch=True)
CALLS = st.one_of(
    st.builds(lambda o: ("get_order", {"order_id": o}), st.one_of(ORDER_IDS, st.text(max_size=8))),
    st.builds(
        lambda w, s: (
            "quote_delivery",
            {"origin": "A", "destination": "B", "weight_kg": w, "service": s},
        ),
        st.one_of(st.floats(-5, 2000, allow_nan=False), st.text(max_size=3)),
        st.sampled_from(["standard", "express", "x"]),
    ),
    st.builds(lambda o: ("cancel_order", {"order_id": o, "reason": "other"}), ORDER_IDS),
    st.just(("nope", {})),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(CALLS, min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_verdict_is_invariant_under_permutation_of_parallel_calls(
    contract: Contract, items: list[tuple[str, dict[str, Any]]], random: Any
) -> None:
    case = load_cases(CASES, contract)[11]  # lookup_and_quote: two expected calls
    made = [call(name, args, call_id=str(i)) for i, (name, args) in enumerate(items)]
    shuffled = list(made)
    random.shuffle(shuffled)

    def verdict(decision: Decision) -> list[tuple[str, Any, Any]]:
        return sorted(
            (f.code, repr(f.expected), repr(f.actual))
            for f in validate_decision(decision, case, contract)
        )

    assert verdict(calls(*made)) == verdict(calls(*shuffled))
