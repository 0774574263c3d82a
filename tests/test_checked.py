"""Suite files that passed the schema checks are not checked again; anything else always is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fcreplay.errors import InputError
from fcreplay.inputs.suite import load_suite

LOADS = (
    "import sys\n"
    "import fcreplay.judge.schema as schema\n"
    "from fcreplay.inputs.suite import load_suite\n"
    "checked = []\n"
    "def counted(check):\n"
    "    return lambda *args: checked.append(1) or check(*args)\n"
    "schema.meta_schema_problems = counted(schema.meta_schema_problems)\n"
    "schema.ArgumentValidator.violations = counted(schema.ArgumentValidator.violations)\n"
    "load_suite(sys.argv[1], cache={cache})\n"
    "print(bool(checked))\n"
)


def checks_schemas(suite_dir: Path, cache: bool | None = True) -> bool:
    """Whether loading the suite (in a fresh process) checked a schema or arguments."""
    result = subprocess.run(
        [sys.executable, "-c", LOADS.format(cache=cache), str(suite_dir / "fcreplay.toml")],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip() == "True"


def edit_contract(suite_dir: Path, **changes: object) -> None:
    path = suite_dir / "contracts" / "delivery_tools.json"
    tools = json.loads(path.read_text(encoding="utf-8"))
    tools[0]["parameters"]["properties"]["order_id"].update(changes)
    path.write_text(json.dumps(tools, ensure_ascii=False, indent=2), encoding="utf-8")


def messages(suite_dir: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_suite(suite_dir / "fcreplay.toml", cache=True)
    return [str(problem) for problem in caught.value.problems]


def test_a_suite_that_passed_is_not_checked_against_schemas_again(suite_dir: Path) -> None:
    assert checks_schemas(suite_dir)
    assert not checks_schemas(suite_dir)
    assert checks_schemas(suite_dir, cache=False)  # check --no-cache: checked afresh
    assert checks_schemas(suite_dir, cache=None)  # no cache at all
    assert not checks_schemas(suite_dir)


def test_what_is_remembered_loads_the_same_suite(suite_dir: Path) -> None:
    cold = load_suite(suite_dir / "fcreplay.toml", cache=False)
    warm = load_suite(suite_dir / "fcreplay.toml", cache=True)
    assert warm.cases == cold.cases and warm.contract == cold.contract
    assert warm.contract.contract_hash == cold.contract.contract_hash


def test_a_schema_problem_is_reported_every_time(suite_dir: Path) -> None:
    load_suite(suite_dir / "fcreplay.toml", cache=True)
    edit_contract(suite_dir, type=5)
    first, second = messages(suite_dir), messages(suite_dir)
    assert first == second
    assert any("is not valid JSON Schema 2020-12" in message for message in first), first


def test_a_changed_contract_checks_the_cases_again(suite_dir: Path) -> None:
    load_suite(suite_dir / "fcreplay.toml", cache=True)
    # Still a valid schema, but the cases' expected order ids no longer match it.
    edit_contract(suite_dir, pattern="^X-[0-9]+$")
    found = messages(suite_dir)
    assert any("rejected by get_order's own schema" in message for message in found), found


def test_changed_cases_are_checked_again(suite_dir: Path) -> None:
    load_suite(suite_dir / "fcreplay.toml", cache=True)
    cases = suite_dir / "cases" / "delivery.jsonl"
    cases.write_text(
        cases.read_text(encoding="utf-8").replace('"ORD-123456"}}', '"nope"}}', 1),
        encoding="utf-8",
    )
    found = messages(suite_dir)
    assert any("rejected by get_order's own schema" in message for message in found), found


@pytest.mark.parametrize("content", ["{not json", '{"format": 1, "stamp": 3, "known": "x"}', "[]"])
def test_a_damaged_memory_is_ignored_and_written_again(suite_dir: Path, content: str) -> None:
    load_suite(suite_dir / "fcreplay.toml", cache=True)
    path = suite_dir / ".fcreplay" / "cache" / "checked.json"
    path.write_text(content, encoding="utf-8")
    assert checks_schemas(suite_dir)
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == 1
    assert not checks_schemas(suite_dir)


def test_a_foreign_stamp_is_not_trusted(suite_dir: Path) -> None:
    load_suite(suite_dir / "fcreplay.toml", cache=True)
    path = suite_dir / ".fcreplay" / "cache" / "checked.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(document | {"stamp": "another fcreplay"}), encoding="utf-8")
    assert checks_schemas(suite_dir)


def test_an_unwritable_cache_still_loads(suite_dir: Path) -> None:
    (suite_dir / ".fcreplay").write_text("a file where the folder would go", encoding="utf-8")
    suite = load_suite(suite_dir / "fcreplay.toml", cache=True)
    assert suite.cases
