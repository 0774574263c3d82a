"""Contract loading: the example contract, and every kind of broken contract file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fcreplay.canonical import canonical_hash
from fcreplay.errors import InputError
from fcreplay.inputs.contract import load_contract

from .conftest import CONTRACT


def test_example_contract_has_the_seed_tools_and_effects() -> None:
    contract = load_contract(CONTRACT)
    assert contract.names == ("get_order", "quote_delivery", "cancel_order")
    assert [tool.effect for tool in contract.tools] == ["read", "read", "write"]
    quote = contract.get("quote_delivery")
    assert quote is not None
    assert quote.parameters["properties"]["weight_kg"]["exclusiveMinimum"] == 0


def test_contract_hash_is_sha256_of_canonical_json_and_ignores_formatting(
    tmp_path: Path,
) -> None:
    document = json.loads(CONTRACT.read_text(encoding="utf-8"))
    compact = tmp_path / "compact.json"
    # Same content, different key order and whitespace: the hash must not move.
    compact.write_text(
        json.dumps([dict(reversed(list(tool.items()))) for tool in document]),
        encoding="utf-8",
    )
    assert load_contract(compact).contract_hash == load_contract(CONTRACT).contract_hash
    assert load_contract(CONTRACT).contract_hash == canonical_hash(document)


def _tools() -> list[dict[str, object]]:
    tools: list[dict[str, object]] = json.loads(CONTRACT.read_text(encoding="utf-8"))
    return tools


def _write(tmp_path: Path, tools: object) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def _error(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_contract(path)
    return caught.value


def _line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(needle)


def test_schema_that_breaks_the_meta_schema_names_the_line(tmp_path: Path) -> None:
    tools = _tools()
    tools[1]["parameters"]["properties"]["weight_kg"]["type"] = "numbr"  # type: ignore[index]
    path = _write(tmp_path, tools)
    error = _error(path)
    assert len(error.problems) == 1
    problem = error.problems[0]
    assert problem.line == _line_of(path, '"numbr"')
    assert "quote_delivery" in problem.message
    assert "JSON Schema 2020-12" in problem.message
    assert str(problem).startswith(f"{path}:{problem.line}: ")


def test_invalid_regex_pattern_is_a_schema_error(tmp_path: Path) -> None:
    tools = _tools()
    tools[0]["parameters"]["properties"]["order_id"]["pattern"] = "^ORD-[0-9"  # type: ignore[index]
    error = _error(_write(tmp_path, tools))
    assert "get_order" in error.problems[0].message


def test_duplicate_tool_name(tmp_path: Path) -> None:
    tools = _tools()
    tools[2]["name"] = "get_order"
    path = _write(tmp_path, tools)
    (problem,) = _error(path).problems
    assert "duplicate tool name 'get_order'" in problem.message
    assert (
        problem.line
        == [
            n
            for n, line in enumerate(path.read_text().splitlines(), 1)
            if '"name": "get_order"' in line
        ][1]
    )


@pytest.mark.parametrize("name", ["get order", "1st_tool", "x" * 65, "get.order", ""])
def test_badly_formed_tool_name(tmp_path: Path, name: str) -> None:
    tools = _tools()
    tools[0]["name"] = name
    (problem,) = _error(_write(tmp_path, tools)).problems
    assert "must match" in problem.message and problem.line is not None


def test_unknown_effect(tmp_path: Path) -> None:
    tools = _tools()
    tools[2]["effect"] = "delete"
    path = _write(tmp_path, tools)
    (problem,) = _error(path).problems
    assert "effect must be" in problem.message
    assert problem.line == _line_of(path, '"delete"')


def test_unknown_key_in_a_tool(tmp_path: Path) -> None:
    tools = _tools()
    tools[0]["strict"] = True
    (problem,) = _error(_write(tmp_path, tools)).problems
    assert "unknown key 'strict'" in problem.message


def test_every_problem_is_reported_not_just_the_first(tmp_path: Path) -> None:
    tools = _tools()
    tools[0]["effect"] = "maybe"
    tools[1]["name"] = "bad name"
    assert len(_error(_write(tmp_path, tools)).problems) == 2


def test_root_must_be_an_object_schema(tmp_path: Path) -> None:
    tools = _tools()
    tools[0]["parameters"] = {"type": "string"}
    (problem,) = _error(_write(tmp_path, tools)).problems
    assert '"type": "object"' in problem.message


def test_syntax_error_reports_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text('[\n  {"name": "a",\n   "effect": "read"\n  ,,]\n', encoding="utf-8")
    (problem,) = _error(path).problems
    assert problem.line == 4 and "not valid JSON" in problem.message


def test_missing_file(tmp_path: Path) -> None:
    (problem,) = _error(tmp_path / "nope.json").problems
    assert problem.message == "file not found" and problem.line is None


def test_not_an_array(tmp_path: Path) -> None:
    (problem,) = _error(_write(tmp_path, {"tools": []})).problems
    assert "JSON array" in problem.message
