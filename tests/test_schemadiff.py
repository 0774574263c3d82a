"""Schema diff: sent tool declarations against the contract, classified and folded.

The cassettes here are SYNTHETIC: built by the adapters' own `build_request`
(sometimes deliberately broken by monkeypatching) and written with
`cassette.write_cassette`, or recorded against the bundled simulator. Nothing
here depends on the repository's committed cassettes.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fcreplay import structdiff
from fcreplay.adapters import gemini, openai_chat
from fcreplay.adapters.registry import get_adapter
from fcreplay.cassettes.store import (
    Cassette,
    CassetteMeta,
    Interaction,
    RecordedRequest,
    UnreadableInteraction,
    load_cassette,
    write_cassette,
)
from fcreplay.cli import run
from fcreplay.engine.plan import Unit, plan_units, unit_settings, unit_tools
from fcreplay.errors import InputError
from fcreplay.inputs.contract import ToolSpec
from fcreplay.inputs.suite import Suite, load_suite
from fcreplay.neutral import HistoryItem, Message, RequestSettings, WireRequest, WireResponse
from fcreplay.render.schemadiff import render
from fcreplay.schemadiff import classes as schemadrift
from fcreplay.schemadiff import differ as schemadiff
from fcreplay.schemadiff.classes import CLASSES, classify
from fcreplay.schemadiff.differ import schema_diff
from fcreplay.structdiff import MISSING

from .conftest import ROOT

BASE = """\
contract = "contracts/delivery_tools.json"
system_prompt = "contracts/delivery_prompt.txt"
cases = "cases/delivery.jsonl"
tool_results = "cases/delivery_results.json"
repetitions = 2
parallel_tool_calls = false
max_steps = 4
"""


def make_suite(
    folder: Path,
    targets: list[tuple[str, str, bool]],
    *,
    variants: tuple[str, ...] = ("auto", "forced", "no_tools", "reversed"),
    extra: str = "",
) -> Suite:
    """A copy of the example suite with the given (name, adapter, strict) targets."""
    text = BASE + f"variants = {json.dumps(list(variants))}\n" + extra
    for name, adapter, strict in targets:
        text += (
            f'\n[[targets]]\nname = "{name}"\nadapter = "{adapter}"\n'
            f'model = "synthetic-model"\nstrict = {json.dumps(strict)}\n'
        )
    (folder / "fcreplay.toml").write_text(text, encoding="utf-8")
    return load_suite(folder / "fcreplay.toml")


def unit_requests(suite: Suite, unit: Unit, steps: int = 2) -> Iterator[tuple[int, int, Any]]:
    """(attempt, step, WireRequest) the unit sends, built by its adapter (no network)."""
    adapter = get_adapter(unit.target.adapter)
    for attempt in range(1, suite.config.repetitions + 1):
        history: list[HistoryItem] = [Message("system", "prompt"), *unit.case.messages]
        for step in range(1 if unit.single_turn else steps):
            tools = unit_tools(suite, unit)
            settings = unit_settings(suite, unit, step)
            yield attempt, step, adapter.build_request(unit.target.model, history, tools, settings)
            history = [*history, Message("assistant", f"turn {step}"), Message("user", "more")]


def interaction(request: WireRequest, attempt: int, step: int) -> Interaction:
    return Interaction(
        RecordedRequest(request.method, "https://provider.test" + request.path, {}, request.body),
        WireResponse(200, {}, {"synthetic": True}),
        {"attempt": attempt, "step": step},
    )


def record(suite: Suite, steps: int = 2) -> int:
    """Write one cassette per planned unit; return how many requests they hold."""
    count = 0
    for unit in plan_units(suite):
        interactions = [interaction(r, a, s) for a, s, r in unit_requests(suite, unit, steps)]
        meta = CassetteMeta(unit.target.name, unit.target.adapter, unit.variant, unit.case.id)
        write_cassette(unit.cassette_path(suite.config.cassettes), interactions, meta)
        count += len(interactions)
    return count


def patch_build(
    monkeypatch: pytest.MonkeyPatch,
    module: Any,
    change: Callable[[dict[str, Any], RequestSettings], None],
) -> None:
    """Make `module.build_request` lossy: `change` edits a copy of each body it builds
    (a built body shares its declarations with every other request: it is read-only)."""
    original = module.build_request

    def lossy(model: str, messages: Any, tools: Any, settings: RequestSettings) -> WireRequest:
        request: WireRequest = original(model, messages, tools, settings)
        body = copy.deepcopy(request.body)
        change(body, settings)
        return dataclasses.replace(request, body=body)

    monkeypatch.setattr(module, "build_request", lossy)


def by_pointer(result: schemadiff.SchemaDiffResult) -> dict[tuple[str, str], str]:
    return {(e.pointer, e.tool or ""): e.kind for e in result.entries}


# --- faithful adapters ------------------------------------------------------------------


FAITHFUL = [
    ("openai_chat", False),
    ("openai_chat", True),
    ("openai_responses", False),
    ("openai_responses", True),
    ("anthropic", False),
    ("gemini", False),
    ("gemini", True),
]


@pytest.mark.parametrize(("adapter", "strict"), FAITHFUL, ids=[f"{a}-{s}" for a, s in FAITHFUL])
def test_requests_built_by_each_adapter_match_the_contract(
    suite_dir: Path, adapter: str, strict: bool
) -> None:
    # The example contract lists every property as required and forbids extra
    # properties, so OpenAI's strict transform is the identity on it.
    suite = make_suite(suite_dir, [("t", adapter, strict)])
    requests = record(suite)
    result = schema_diff(suite)
    assert result.entries == ()
    assert result.ok and result.requests == requests > 100
    assert result.missing == () and result.skipped == ()


def test_anthropic_strict_transform_is_a_documented_constraint_loss(suite_dir: Path) -> None:
    suite = make_suite(suite_dir, [("claude", "anthropic", True)], variants=("auto",))
    record(suite)
    result = schema_diff(suite)
    kinds = by_pointer(result)
    origin = "/quote_delivery/parameters/properties/origin"
    assert kinds[(origin + "/minLength", "quote_delivery")] == "constraint_lost"
    assert kinds[(origin + "/description", "quote_delivery")] == "description_changed"
    assert kinds[("/get_order/parameters/properties/order_id/pattern", "get_order")] == (
        "constraint_lost"
    )
    # `type` left out beside a string enum says nothing less: lossless.
    assert kinds[("/quote_delivery/parameters/properties/service/type", "quote_delivery")] == (
        "lossless"
    )
    assert all(entry.documented for entry in result.entries)
    assert not result.ok
    assert {e.kind for e in result.blocking} == {"constraint_lost", "description_changed"}

    allowed = schema_diff(suite, allow=["constraint_lost", "description_changed"])
    assert allowed.ok and len(allowed.entries) == len(result.entries)
    assert {e.status for e in allowed.entries} == {"allowed", "lossless"}


# --- the acceptance test: a lost `required` -----------------------------------------------


def test_lost_required_exits_1_with_pointer_and_class_in_every_format(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(suite_dir, [("openai", "openai_chat", False)])
    record(suite)
    config = str(suite_dir / "fcreplay.toml")
    for fmt in ("text", "json", "markdown"):
        assert run(["schema-diff", "--config", config, "--format", fmt]) == 0, fmt
    capsys.readouterr()

    path = suite_dir / "cassettes" / "openai" / "auto" / "quote_complete.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    for tools in document["shared"].values():  # each tool list the requests sent, once
        for tool in tools:
            if tool["function"]["name"] == "quote_delivery":
                del tool["function"]["parameters"]["required"]
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")

    outputs = {}
    for fmt in ("text", "json", "markdown"):
        assert run(["schema-diff", "--config", config, "--format", fmt]) == 1, fmt
        outputs[fmt] = capsys.readouterr().out
        assert "/quote_delivery/parameters/required" in outputs[fmt], fmt
        assert "semantic_change" in outputs[fmt], fmt

    report = json.loads(outputs["json"])
    assert report["ok"] is False and report["blocking"] == 1
    (entry,) = report["entries"]
    assert entry["pointer"] == "/quote_delivery/parameters/required"
    assert entry["class"] == "semantic_change" and entry["status"] == "blocking"
    assert entry["contract"] == ["origin", "destination", "weight_kg", "service"]
    assert entry["sent"] is None and entry["sent_missing"] is True
    # auto, 2 repetitions x 2 steps, all folded into one line with one example
    assert entry["count"] == 4 and entry["example"] == str(path)
    assert "| **blocking** |" in outputs["markdown"]
    assert outputs["text"].count("/quote_delivery/parameters/required") == 1

    assert run(["schema-diff", "--config", config, "--allow", "semantic_change"]) == 0
    empty = suite_dir / "elsewhere"
    empty.mkdir()
    capsys.readouterr()
    assert run(["schema-diff", "--config", config, "--cassettes", str(empty)]) == 0
    assert "0 requests in 0 cassettes" in capsys.readouterr().out


# --- deliberately lossy adapters: every class -----------------------------------------


def _lossy_openai(body: dict[str, Any], settings: RequestSettings) -> None:
    tools = {tool["function"]["name"]: tool for tool in body.get("tools", [])}
    if not tools:
        return
    get_order = tools["get_order"]["function"]
    get_order["description"] = "Look an order up."
    del get_order["parameters"]["properties"]["order_id"]["pattern"]
    quote = tools["quote_delivery"]["function"]["parameters"]
    quote["required"] = ["origin", "destination", "weight_kg"]
    quote["additionalProperties"] = True
    quote["properties"]["origin"]["type"] = "STRING"
    del quote["properties"]["destination"]["minLength"]
    quote["properties"]["weight_kg"]["maximum"] = 5000
    quote["properties"]["weight_kg"]["type"] = ["number", "null"]
    quote["properties"]["service"]["enum"] = ["standard"]
    extra = {"name": "refund_order", "description": "", "parameters": {"type": "object"}}
    body["tools"] = [
        tools["quote_delivery"],
        tools["get_order"],
        {"type": "function", "function": extra},
    ]
    body["tool_choice"] = "required"
    del body["parallel_tool_calls"]


EVERY_CLASS = {
    ("/get_order/description", "get_order"): "description_changed",
    ("/get_order/parameters/properties/order_id/pattern", "get_order"): "constraint_lost",
    ("/quote_delivery/parameters/required", "quote_delivery"): "semantic_change",
    ("/quote_delivery/parameters/additionalProperties", "quote_delivery"): "semantic_change",
    ("/quote_delivery/parameters/properties/origin/type", "quote_delivery"): "lossless",
    ("/quote_delivery/parameters/properties/destination/minLength", "quote_delivery"): (
        "constraint_lost"
    ),
    ("/quote_delivery/parameters/properties/weight_kg/maximum", "quote_delivery"): (
        "constraint_lost"
    ),
    ("/quote_delivery/parameters/properties/weight_kg/type", "quote_delivery"): ("semantic_change"),
    ("/quote_delivery/parameters/properties/service/enum", "quote_delivery"): "semantic_change",
    ("/cancel_order", "cancel_order"): "tool_missing",
    ("/refund_order", "refund_order"): "tool_extra",
    ("", ""): "order_changed",
}


def test_a_lossy_adapter_shows_every_class(
    suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(suite_dir, [("lossy", "openai_chat", False)], variants=("auto",))
    patch_build(monkeypatch, openai_chat, _lossy_openai)
    requests = record(suite)
    result = schema_diff(suite)

    assert {e.kind for e in result.entries} == set(CLASSES)
    schema_level = {
        (e.pointer, e.tool or ""): e.kind for e in result.entries if e.kind not in _SETTINGS
    }
    assert schema_level == EVERY_CLASS
    choice = next(e for e in result.entries if e.kind == "tool_choice_mismatch")
    assert (choice.contract, choice.sent) == ({"mode": "auto"}, {"mode": "required"})
    parallel = next(e for e in result.entries if e.kind == "parallel_mismatch")
    assert (parallel.contract, parallel.sent) == (False, None)
    order = next(e for e in result.entries if e.kind == "order_changed")
    assert (order.contract, order.sent) == (
        ["get_order", "quote_delivery"],
        ["quote_delivery", "get_order"],
    )
    # every request carries every drift, and each drift is one folded line
    assert {e.count for e in result.entries} == {requests}
    assert result.declarations == 1
    assert not any(e.documented for e in result.entries)
    assert {e.kind for e in result.blocking} == set(CLASSES) - {"lossless"}


_SETTINGS = {"tool_choice_mismatch", "parallel_mismatch"}


def test_a_reader_that_keeps_upper_case_types_is_lossless(
    suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(suite_dir, [("g", "gemini", False)], variants=("auto",))
    record(suite)
    original = gemini.sent_tools

    def upper(body: Any) -> list[ToolSpec]:
        return [
            ToolSpec(spec.name, spec.description, _upper_types(spec.parameters))
            for spec in original(body)
        ]

    monkeypatch.setattr(gemini, "sent_tools", upper)
    result = schema_diff(suite)
    assert result.ok and result.entries
    assert {e.kind for e in result.entries} == {"lossless"}
    assert ("/get_order/parameters/type", "get_order") in by_pointer(result)


def _upper_types(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            key: value.upper() if key == "type" else _upper_types(value)
            for key, value in schema.items()
        }
    return schema


def test_variants_expect_their_own_tools_and_tool_choice(
    suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def ignore_variant(body: dict[str, Any], settings: RequestSettings) -> None:
        # Always the contract's tools in order, always "auto": wrong for three variants.
        if "tools" not in body:
            full = openai_chat.build_request("m", [], list(suite.contract.tools), RequestSettings())
            body["tools"] = full.body["tools"]
            body["parallel_tool_calls"] = False
        body["tools"].sort(key=lambda t: suite.contract.names.index(t["function"]["name"]))
        body["tool_choice"] = "auto"

    suite = make_suite(suite_dir, [("o", "openai_chat", False)])
    patch_build(monkeypatch, openai_chat, ignore_variant)
    record(suite)
    result = schema_diff(suite)

    def variants_of(kind: str) -> set[str]:
        return {Path(e.example).parent.name for e in result.entries if e.kind == kind}

    assert variants_of("tool_extra") == {"no_tools"}
    assert variants_of("order_changed") == {"reversed"}
    forced = [e for e in result.entries if e.kind == "tool_choice_mismatch"]
    assert {(e.contract["mode"], e.sent["mode"]) for e in forced} == {
        ("forced", "auto"),
        ("no_tools", "auto"),
    }
    assert {e.contract.get("tool") for e in forced} >= {"get_order", "quote_delivery"}
    assert variants_of("tool_choice_mismatch") == {"forced", "no_tools"}
    # no_tools sends no parallel flag; a request with tools and the flag is a mismatch there
    assert variants_of("parallel_mismatch") == {"no_tools"}


def test_a_case_tool_choice_applies_to_the_first_step_only(
    suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (suite_dir / "cases" / "delivery.jsonl").open("a", encoding="utf-8") as stream:
        stream.write(
            '{"id":"must_call","user":"Где заказ ORD-123456?","tool_choice":"required",'
            '"expect":{"kind":"tool_call","tool":"get_order"}}\n'
        )
    suite = make_suite(suite_dir, [("o", "openai_chat", False)], variants=("auto",))
    record(suite)
    assert schema_diff(suite).ok  # step 0 "required", step 1 "auto", as planned

    patch_build(monkeypatch, openai_chat, lambda body, s: body.update(tool_choice="required"))
    record(suite)
    result = schema_diff(suite)
    mismatches = [e for e in result.entries if e.kind == "tool_choice_mismatch"]
    # every case's step 1, the new case's step 0 is right; other cases' step 0 is wrong
    assert {json.dumps(e.contract) for e in mismatches} == {'{"mode": "auto"}'}
    must_call = suite_dir / "cassettes" / "o" / "auto" / "must_call.json"
    per_step = [
        openai_chat.read_request(i.request.body, "").tool_choice.mode  # type: ignore[union-attr]
        for i in load_cassette(must_call).interactions
    ]
    assert per_step == ["required"] * 4
    assert sum(e.count for e in mismatches) == result.requests - 2  # must_call's two step 0s


def test_a_policy_the_format_cannot_carry_is_not_a_mismatch(suite_dir: Path) -> None:
    # parallel_tool_calls = false is configured. Gemini has no such knob (lint says so);
    # Anthropic carries it in tool_choice, which takes none beside {"type": "none"}.
    with (suite_dir / "cases" / "delivery.jsonl").open("a", encoding="utf-8") as stream:
        stream.write(
            '{"id":"no_calls","user":"Привет","tool_choice":"none","expect":{"kind":"text"}}\n'
        )
    suite = make_suite(suite_dir, [("g", "gemini", False), ("a", "anthropic", False)])
    record(suite)
    assert suite.config.parallel_tool_calls is False
    assert schema_diff(suite).entries == ()
    body = load_cassette(suite_dir / "cassettes" / "a" / "auto" / "no_calls.json")
    first = body.interactions[0].request.body  # type: ignore[union-attr]
    assert first["tool_choice"] == {"type": "none"}


# --- Gemini's real formats: lossless by default, visible loss in the `parameters` subset ---


def _gemini_suite(suite_dir: Path) -> Suite:
    suite = make_suite(suite_dir, [("gemini", "gemini", False)], variants=("auto",))
    record(suite)
    return suite


def test_gemini_default_request_carries_the_contract_losslessly(suite_dir: Path) -> None:
    suite = _gemini_suite(suite_dir)
    cassette = load_cassette(suite_dir / "cassettes" / "gemini" / "auto" / "quote_complete.json")
    body = cassette.interactions[0].request.body  # type: ignore[union-attr]
    declarations = body["tools"][0]["functionDeclarations"]
    assert all("parametersJsonSchema" in d and "parameters" not in d for d in declarations)
    result = schema_diff(suite)
    assert result.ok and result.entries == ()


def test_gemini_openapi_subset_request_shows_every_dropped_keyword(suite_dir: Path) -> None:
    suite = _gemini_suite(suite_dir)
    dropped: set[str] = set()
    for path in (suite_dir / "cassettes" / "gemini").rglob("*.json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        for tools in document["shared"].values():  # each tool list the requests sent, once
            for declaration in tools[0]["functionDeclarations"]:
                schema = declaration.pop("parametersJsonSchema")
                declaration["parameters"], lost = gemini.to_openapi_subset(schema)
                prefix = f"/{declaration['name']}/parameters"
                dropped |= {f"{prefix}{at}/{keyword}" for at, keyword in lost}
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")

    result = schema_diff(suite)
    kinds = by_pointer(result)
    weight = "/quote_delivery/parameters/properties/weight_kg/exclusiveMinimum"
    assert kinds[(weight, "quote_delivery")] == "constraint_lost"
    assert kinds[("/get_order/parameters/additionalProperties", "get_order")] == ("semantic_change")
    # never a silent loss: every keyword the conversion dropped is a blocking entry
    assert dropped == {e.pointer for e in result.blocking}
    assert weight in dropped
    # upper-case type names and kept keywords (pattern, minLength) are no difference
    assert not any(e.pointer.endswith(("/type", "/pattern", "/minLength")) for e in result.entries)


# --- folding, configuration, inputs -------------------------------------------------------


def test_config_allow_list_is_read_and_checked(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = 'schema_diff_allow = ["constraint_lost", "description_changed"]\n'
    suite = make_suite(suite_dir, [("c", "anthropic", True)], variants=("auto",), extra=extra)
    record(suite)
    assert suite.config.schema_diff_allow == ("constraint_lost", "description_changed")
    result = schema_diff(suite)
    assert result.ok and result.entries and result.allowed == suite.config.schema_diff_allow

    bad = 'schema_diff_allow = ["lossy"]\n'
    with pytest.raises(InputError, match="schema_diff_allow: must be a list drawn from"):
        make_suite(suite_dir, [("c", "anthropic", True)], extra=bad)
    assert run(["schema-diff", "--config", str(suite_dir / "fcreplay.toml")]) == 2
    assert "fcreplay.toml:" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown class"):
        schema_diff(suite, allow=["lossy"])


def test_missing_cassettes_and_unreadable_requests_are_noted_not_blocking(
    suite_dir: Path,
) -> None:
    suite = make_suite(suite_dir, [("o", "openai_chat", False)], variants=("auto",))
    unit = plan_units(suite, case_ids=["direct_lookup"])[0]
    good = [interaction(r, a, s) for a, s, r in unit_requests(suite, unit)]
    odd = Interaction(
        RecordedRequest("POST", "https://provider.test/x", {}, "not json"),
        WireResponse(200, {}, None),
    )
    meta = CassetteMeta("o", "openai_chat", "auto", unit.case.id)
    write_cassette(unit.cassette_path(suite.config.cassettes), [*good, odd], meta)
    result = schema_diff(suite)
    assert result.ok and result.requests == len(good) and result.cassettes == 1
    assert len(result.missing) == len(suite.cases) - 1
    assert len(result.skipped) == 1 and "not a JSON object" in result.skipped[0]
    assert "planned cassettes are not recorded" in render(result, "text")


def test_unknown_target_is_an_input_error(suite_dir: Path) -> None:
    suite = make_suite(suite_dir, [("o", "openai_chat", False)])
    with pytest.raises(InputError, match="no target 'nope'"):
        schema_diff(suite, targets=["nope"])


def test_already_loaded_cassettes_give_the_same_result(suite_dir: Path) -> None:
    suite = make_suite(suite_dir, [("a", "anthropic", True), ("o", "openai_chat", True)])
    record(suite)
    from_disk = schema_diff(suite, targets=["a"])
    folder = suite.config.cassettes
    loaded = [load_cassette(unit.cassette_path(folder)) for unit in plan_units(suite)]
    from_memory = schema_diff(suite, targets=["a"], loaded=loaded)
    assert from_memory.to_json() | {"skipped": []} == from_disk.to_json()
    assert len(from_memory.skipped) == len(loaded) // 2  # target "o" was not asked for


def test_json_output_is_stable(suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = make_suite(suite_dir, [("lossy", "openai_chat", False)], variants=("auto",))
    patch_build(monkeypatch, openai_chat, _lossy_openai)
    record(suite)
    first, second = render(schema_diff(suite), "json"), render(schema_diff(suite), "json")
    assert first == second
    document = json.loads(first)
    assert list(document) == sorted(document)
    assert document["entries"][0]["class"] in CLASSES


# --- performance: each distinct declaration is diffed once ---------------------------------


def _many_requests(suite: Suite, total: int) -> list[Cassette]:
    """`total` requests spread over the units' cassettes, each with its own conversation."""
    units = plan_units(suite)
    built = {u.label: list(unit_requests(suite, u)) for u in units}
    cassettes = []
    per_unit = total // len(units)
    for unit in units:
        requests = built[unit.label]
        interactions: list[Interaction | UnreadableInteraction] = []
        for n in range(per_unit):
            _, step, request = requests[n % len(requests)]
            body = json.loads(json.dumps(request.body))  # separate objects, as loaded
            body[next(k for k, v in body.items() if isinstance(v, list) and k != "tools")].append(
                {"role": "user", "content": f"message {n}"}
            )
            interactions.append(interaction(WireRequest("POST", request.path, {}, body), 1, step))
        meta = CassetteMeta(unit.target.name, unit.target.adapter, unit.variant, unit.case.id)
        cassettes.append(Cassette(Path(f"{unit.label}.json"), meta, interactions))
    return cassettes


def test_ten_thousand_requests_cost_the_deepdiff_work_of_their_distinct_declarations(
    suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(suite_dir, [("a", "anthropic", True), ("g", "gemini", False)])
    units = len(plan_units(suite))
    many = _many_requests(suite, 10_000 // units * units)
    one_each = _many_requests(suite, units)
    calls: list[int] = []
    original = structdiff.differences

    def counted(before: Any, after: Any) -> Any:
        calls.append(1)
        return original(before, after)

    monkeypatch.setattr(schemadrift, "differences", counted)
    small = schema_diff(suite, loaded=one_each)
    diffed_for_one_each = len(calls)
    result = schema_diff(suite, loaded=many)

    assert result.requests >= 9_900 and small.requests == units
    # per target: the contract's order, reversed, and none (no_tools)
    assert result.declarations == small.declarations == 6
    # deepdiff work depends on the distinct declarations, not on the number of requests
    assert len(calls) == 2 * diffed_for_one_each > 0
    assert [(e.pointer, e.kind) for e in result.entries] == [
        (e.pointer, e.kind) for e in small.entries
    ]


# --- the bundled simulator ------------------------------------------------------------------


def test_cassettes_recorded_against_the_simulator_pass(
    suite_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fcreplay.engine.runner import RecordOptions, record
    from fcreplay.simulator.server import base_urls, running_simulator

    with running_simulator(ROOT / "cases" / "delivery_simulator.json") as url:
        urls = base_urls(url)
        text = BASE + 'variants = ["auto", "forced", "no_tools", "reversed"]\nrepetitions = 1\n'
        text = text.replace("repetitions = 2\n", "")
        for adapter in ("openai_chat", "openai_responses", "anthropic", "gemini"):
            text += (
                f'\n[[targets]]\nname = "sim-{adapter}"\nadapter = "{adapter}"\n'
                f'model = "fcreplay-sim-careful"\nbase_url = "{urls[adapter]}"\n'
                f"stream = {json.dumps(adapter == 'gemini')}\n"
            )
        (suite_dir / "fcreplay.toml").write_text(text, encoding="utf-8")
        suite = load_suite(suite_dir / "fcreplay.toml")
        cases = ("direct_lookup", "quote_complete")
        recorded = record(suite, RecordOptions(case_ids=cases))
    assert recorded.records and all(r.transport_error is None for r in recorded.records)
    capsys.readouterr()
    code = run(["schema-diff", "--config", str(suite_dir / "fcreplay.toml")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "every sent tool declaration matches the contract" in out
    assert "planned cassettes are not recorded" in out  # the cases not recorded here


# --- classification rules --------------------------------------------------------------------

RULES = [
    ("minimum", 1, 0, "constraint_lost"),
    ("minimum", 1, 2, "semantic_change"),
    ("maxLength", 10, 20, "constraint_lost"),
    ("maxLength", 10, 5, "semantic_change"),
    ("multipleOf", 0.5, 0.25, "constraint_lost"),
    ("multipleOf", 0.5, 0.3, "semantic_change"),
    ("pattern", "^a$", MISSING, "constraint_lost"),
    ("pattern", "^a$", "^b$", "semantic_change"),
    ("pattern", MISSING, "^a$", "semantic_change"),
    ("format", "email", MISSING, "constraint_lost"),
    ("uniqueItems", True, False, "constraint_lost"),
    ("required", ["a", "b"], ["b", "a"], "lossless"),
    ("required", ["a", "b"], ["a"], "semantic_change"),
    ("enum", ["x", "y"], ["y", "x"], "lossless"),
    ("enum", ["x", "y"], ["x", "y", "z"], "semantic_change"),
    ("type", "string", "STRING", "lossless"),
    ("type", "string", ["string"], "lossless"),
    ("type", "string", ["string", "null"], "semantic_change"),
    ("additionalProperties", MISSING, True, "lossless"),
    ("additionalProperties", False, MISSING, "semantic_change"),
    ("description", "a", "b", "description_changed"),
    ("title", "a", MISSING, "description_changed"),
    ("$schema", "https://json-schema.org/draft/2020-12/schema", MISSING, "lossless"),
    ("x-vendor", 1, 2, "semantic_change"),
    (None, {"type": "string"}, MISSING, "semantic_change"),
]


@pytest.mark.parametrize(("keyword", "before", "after", "expected"), RULES)
def test_classification_rules(keyword: str | None, before: Any, after: Any, expected: str) -> None:
    assert classify(keyword, before, after, {}, {}) == expected


def test_equivalent_spellings_are_lossless() -> None:
    enum_node = {"enum": ["a"]}
    const_node = {"const": "a"}
    assert classify("const", "a", MISSING, const_node, enum_node) == "lossless"
    assert classify("enum", MISSING, ["a"], const_node, enum_node) == "lossless"
    assert classify("enum", MISSING, ["b"], const_node, {"enum": ["b"]}) == "semantic_change"
    typed = {"type": "integer", "enum": [1, 2]}
    assert classify("type", "integer", MISSING, typed, {"enum": [1, 2]}) == "lossless"
    assert classify("type", "integer", MISSING, typed, {"enum": [1, 2.5]}) == "semantic_change"


def test_declarations_outside_tools_are_told_apart(suite_dir: Path) -> None:
    # Chat Completions' deprecated `functions` list: a top-level list that is not the
    # conversation, so it must stay in the fingerprint.
    suite = make_suite(suite_dir, [("o", "openai_chat", False)], variants=("auto",))
    unit = plan_units(suite, case_ids=["direct_lookup"])[0]
    interactions = []
    for attempt, step, request in unit_requests(suite, unit):
        body = dict(request.body)
        functions = [tool["function"] for tool in body.pop("tools")]
        if attempt == 2:
            functions[0] = json.loads(json.dumps(functions[0]))
            del functions[0]["parameters"]["properties"]["order_id"]["pattern"]
        body["functions"] = functions
        interactions.append(interaction(WireRequest("POST", request.path, {}, body), attempt, step))
    meta = CassetteMeta("o", "openai_chat", "auto", unit.case.id)
    write_cassette(unit.cassette_path(suite.config.cassettes), interactions, meta)
    result = schema_diff(suite)
    (entry,) = result.entries
    assert entry.pointer == "/get_order/parameters/properties/order_id/pattern"
    assert entry.kind == "constraint_lost" and entry.count == 2 == result.requests // 2
