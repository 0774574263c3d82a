"""Provider compatibility lint: errors, warnings and notes per target, each citing its rule."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from fcreplay.adapters import anthropic, gemini, openai_chat
from fcreplay.cli import run
from fcreplay.inputs.config import Target
from fcreplay.inputs.contract import Contract, ToolSpec
from fcreplay.lint.suite import CompatIssue, lint_target

ADAPTERS = ("openai_chat", "openai_responses", "anthropic", "gemini")


def issues(
    adapter: str,
    tools: list[ToolSpec],
    *,
    strict: bool = False,
    model: str = "some-model",
    parallel: bool | None = False,
) -> list[CompatIssue]:
    target = Target(name="t", adapter=adapter, model=model, strict=strict)
    return lint_target(target, tools, parallel_tool_calls=parallel)


def at(found: list[CompatIssue], level: str) -> dict[str, CompatIssue]:
    return {issue.pointer: issue for issue in found if issue.level == level}


def tool(name: str, parameters: dict[str, Any], description: str = "d") -> ToolSpec:
    return ToolSpec(name, description, parameters)


def obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("adapter", ADAPTERS)
def test_the_example_contract_has_no_errors(contract: Contract, adapter: str, strict: bool) -> None:
    found = issues(adapter, list(contract.tools), strict=strict)
    assert not at(found, "error")
    assert all(issue.rule.endswith(")") and "docs/providers.md §" in issue.rule for issue in found)
    assert [i.level for i in found] == sorted((i.level for i in found), key=LEVEL_ORDER.index)


LEVEL_ORDER = ["error", "warning", "note"]


# --- OpenAI ----------------------------------------------------------------------------


def test_openai_strict_rejections_are_errors() -> None:
    tools = [
        tool("root_union", {"anyOf": [obj({"a": {"type": "string"}})], "type": "object"}),
        tool(
            "combined",
            obj({"a": {"allOf": [{"type": "string"}, {"minLength": 2}]}, "b": {"not": {}}}),
        ),
        tool("dotted.name", obj({})),
    ]
    errors = at(issues("openai_chat", tools, strict=True), "error")
    assert set(errors) == {
        "/root_union/parameters",
        "/combined/parameters/properties/a/allOf",
        "/combined/parameters/properties/b/not",
        "/dotted.name",
    }
    assert "root must be type object" in errors["/root_union/parameters"].rule
    assert errors["/combined/parameters/properties/a/allOf"].rule == (
        "OpenAI Structured Outputs: allOf, not, dependentRequired, dependentSchemas and "
        "if/then/else are not supported (docs/providers.md §2.3)"
    )
    assert "§1.3" in errors["/dotted.name"].rule


def test_openai_strict_unconfirmed_keywords_are_warnings(contract: Contract) -> None:
    found = issues("openai_responses", list(contract.tools), strict=True)
    warnings = at(found, "warning")
    assert set(warnings) == {
        "/quote_delivery/parameters/properties/origin/minLength",
        "/quote_delivery/parameters/properties/destination/minLength",
    }
    assert "unconfirmed" in warnings[next(iter(warnings))].rule
    # pattern, exclusiveMinimum and maximum are in the supported list
    assert not any(i.pointer.endswith(("/pattern", "/exclusiveMinimum")) for i in found)


def test_openai_strict_transform_of_optional_properties_is_a_warning() -> None:
    optional = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
        "required": ["id"],
    }
    found = issues("openai_chat", [tool("annotate", optional)], strict=True)
    assert not at(found, "error")  # the transform makes it acceptable...
    warnings = at(found, "warning")  # ...by changing what it means
    assert warnings["/annotate/parameters/required"].message.endswith("(semantic_change)")
    assert "/annotate/parameters/additionalProperties" in warnings
    assert "/annotate/parameters/properties/note/type" in warnings
    assert (
        "optional properties required and nullable"
        in warnings["/annotate/parameters/required"].rule
    )


def test_openai_strict_without_the_transform_breaks_its_invariants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(openai_chat, "wire_schema", lambda parameters, strict: parameters)
    loose = {"type": "object", "properties": {"id": {"type": "string"}}}
    errors = at(issues("openai_chat", [tool("loose", loose)], strict=True), "error")
    assert "every object needs additionalProperties: false" in (
        errors["/loose/parameters/additionalProperties"].rule
    )
    assert errors["/loose/parameters/required"].message == "properties not listed in required: id"


def test_openai_limits_models_and_parallel_policy(contract: Contract) -> None:
    many = [tool(f"tool_{n}", obj({})) for n in range(129)]
    assert at(issues("openai_chat", many), "error")[""].message == (
        "129 tools declared, more than 128"
    )
    fine_tuned = at(issues("openai_chat", list(contract.tools), strict=True, model="ft:x"), "error")
    assert "/get_order/parameters/properties/order_id/pattern" in fine_tuned
    assert "/quote_delivery/parameters/properties/weight_kg/maximum" in fine_tuned
    parallel = at(
        issues("openai_chat", list(contract.tools), strict=True, parallel=None), "warning"
    )
    assert "parallel_tool_calls = false" in parallel[""].rule
    long = [tool("chatty", obj({}), description="x" * 1025)]
    assert (
        "1025 characters"
        in at(issues("openai_chat", long), "warning")["/chatty/description"].message
    )
    assert at(issues("openai_chat", list(contract.tools)), "note")[""].message.startswith(
        "strict is off"
    )


# --- Anthropic ---------------------------------------------------------------------------


def test_anthropic_strict_moves_constraints_into_descriptions(contract: Contract) -> None:
    found = issues("anthropic", list(contract.tools), strict=True)
    assert not at(found, "error")
    warnings = at(found, "warning")
    weight = "/quote_delivery/parameters/properties/weight_kg"
    assert "(constraint_lost)" in warnings[weight + "/exclusiveMinimum"].message
    assert "(description_changed)" in warnings[weight + "/description"].message
    assert "moved into the description" in warnings[weight + "/maximum"].rule


def test_anthropic_strict_limits_are_errors() -> None:
    optional = {"type": "object", "properties": {f"p{n}": {"type": "string"} for n in range(25)}}
    unions = obj({f"u{n}": {"type": ["string", "null"]} for n in range(17)})
    recursive = obj({"child": {"$ref": "#"}})
    tools = [
        tool("optional", optional),
        tool("unions", unions),
        tool("recursive", recursive),
        *[tool(f"filler_{n}", obj({})) for n in range(18)],
    ]
    errors = [i for i in issues("anthropic", tools, strict=True) if i.level == "error"]
    messages = {i.message for i in errors}
    assert "21 strict tools, more than 20" in messages
    assert "25 optional parameters, more than 24" in messages
    assert "17 parameters using unions, more than 16" in messages
    assert any(i.pointer == "/recursive/parameters/properties/child/$ref" for i in errors)
    assert all("docs/providers.md §4.3" in i.rule for i in errors)


def test_anthropic_strict_without_the_transform_is_rejected(
    contract: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(anthropic, "wire_schema", lambda parameters, strict: parameters)
    errors = at(issues("anthropic", list(contract.tools), strict=True), "error")
    assert "/quote_delivery/parameters/properties/weight_kg/exclusiveMinimum" in errors
    assert "/quote_delivery/parameters/properties/origin/minLength" in errors
    assert (
        "numeric constraints"
        in errors["/quote_delivery/parameters/properties/weight_kg/maximum"].rule
    )


def test_anthropic_names() -> None:
    errors = at(issues("anthropic", [tool("x" * 65, obj({}))]), "error")
    assert "^[a-zA-Z0-9_-]{1,64}$" in errors["/" + "x" * 65].rule


# --- Gemini ------------------------------------------------------------------------------


def test_gemini_json_schema_subset_warnings_and_parameters_notes(contract: Contract) -> None:
    found = issues("gemini", list(contract.tools), strict=True)
    assert not at(found, "error")
    warnings = at(found, "warning")
    weight = "/quote_delivery/parameters/properties/weight_kg/exclusiveMinimum"
    assert "outside the documented subset" in warnings[weight].rule
    assert "/get_order/parameters/properties/order_id/pattern" in warnings
    notes = at(found, "note")
    assert set(notes) == {
        weight,
        "/get_order/parameters/additionalProperties",
        "/quote_delivery/parameters/additionalProperties",
        "/cancel_order/parameters/additionalProperties",
    }
    assert "applies only to `parameters`" in notes[weight].message
    levels = [(i.level, i.message) for i in found if i.pointer == ""]
    assert ("warning", "strict = true changes nothing: Gemini has no strict flag") in levels
    assert any("parallel_tool_calls = false is not sent" in m for _, m in levels)


def test_gemini_subset_sent_as_parameters_is_a_visible_transform(
    contract: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = gemini.build_request

    def subset(*args: Any, **kwargs: Any) -> Any:
        request = original(*args, **kwargs)
        body = copy.deepcopy(request.body)  # a built body is read-only: it shares its tools
        for declaration in body["tools"][0]["functionDeclarations"]:
            schema = declaration.pop("parametersJsonSchema")
            declaration["parameters"] = gemini.to_openapi_subset(schema)[0]
        return dataclasses.replace(request, body=body)

    monkeypatch.setattr(gemini, "build_request", subset)
    found = issues("gemini", list(contract.tools), parallel=None)
    transforms = {i.pointer: i.message for i in found if i.message.endswith(")")}
    weight = "/quote_delivery/parameters/properties/weight_kg/exclusiveMinimum"
    assert transforms[weight].endswith("(constraint_lost)")
    assert transforms["/cancel_order/parameters/additionalProperties"].endswith("(semantic_change)")
    assert all(i.level == "warning" for i in found if i.pointer in transforms)
    assert not at(found, "note")  # the "applies only to parameters" note would be false now


def test_gemini_refs_names_and_counts() -> None:
    schema = {
        "type": "object",
        "$defs": {"id": {"type": "string"}},
        "properties": {
            "order": {"$ref": "#/$defs/id", "description": "x"},
            "weight-kg": {"type": "number"},
        },
    }
    found = issues("gemini", [tool("lookup", schema), tool("9lives", obj({}))], parallel=None)
    errors = at(found, "error")
    assert "sibling keywords description" in errors["/lookup/parameters/properties/order"].message
    assert "/9lives" in errors
    warnings = at(found, "warning")
    assert (
        "property name 'weight-kg'" in warnings["/lookup/parameters/properties/weight-kg"].message
    )
    many = [tool(f"t{n}", obj({})) for n in range(129)]
    assert "Vertex AI" in at(issues("gemini", many, parallel=None), "warning")[""].rule


# --- the lint command --------------------------------------------------------------------


def _config(suite_dir: Path, targets: list[tuple[str, str, bool]]) -> str:
    path = suite_dir / "fcreplay.toml"
    text = path.read_text(encoding="utf-8")
    text = text[: text.find("[[targets]]")] if "[[targets]]" in text else text
    for name, adapter, strict in targets:
        text += (
            f'\n[[targets]]\nname = "{name}"\nadapter = "{adapter}"\nmodel = "m"\n'
            f"strict = {json.dumps(strict)}\n"
        )
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_lint_prints_warnings_and_passes(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(suite_dir, [(a, a, False) for a in ADAPTERS] + [("claude", "anthropic", True)])
    assert run(["lint", "--config", config]) == 0
    out = capsys.readouterr().out
    assert "provider  claude (anthropic, strict): 0 errors, 11 warnings" in out
    assert "rule: Anthropic strict tool use" in out
    assert "applies only to `parameters`" in out
    assert "lint: no problems; " in out and "provider warnings" in out


def test_lint_exits_1_on_a_provider_error(
    suite_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = suite_dir / "contracts" / "delivery_tools.json"
    tools = json.loads(path.read_text(encoding="utf-8"))
    origin = tools[1]["parameters"]["properties"]["origin"]
    tools[1]["parameters"]["properties"]["origin"] = {"allOf": [copy.deepcopy(origin)]}
    path.write_text(json.dumps(tools, ensure_ascii=False), encoding="utf-8")
    config = _config(suite_dir, [("gpt", "openai_chat", True), ("claude", "anthropic", False)])
    assert run(["lint", "--config", config]) == 1
    out = capsys.readouterr().out
    assert "error    /quote_delivery/parameters/properties/origin/allOf" in out
    assert "docs/providers.md §2.3" in out
    assert "lint: 1 provider-compatibility error" in out


def test_lint_without_targets_says_so(suite_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["lint", "--config", _config(suite_dir, [])]) == 0
    out = capsys.readouterr().out
    assert "provider compatibility not checked" in out and "lint: no problems" in out


def test_lint_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["lint", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "would reject the request: exit 1" in text
    assert "never fail lint" in text and "exit 2" in text
