"""The bfcl rules and `fcreplay import bfcl`, on BFCL-shaped fixtures written for these tests."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run
from fcreplay.importers.bfcl import NAMES
from fcreplay.importers.bfcl_judge import judge_output, load_names
from fcreplay.inputs.suite import Suite, load_suite

FIXTURES = Path(__file__).parent / "fixtures" / "bfcl"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bfcl") / "suite"
    args = ["import", "bfcl", "--data", str(FIXTURES), "-o", str(out)]
    assert (
        run(
            [
                *args,
                "--category",
                "simple_python",
                "--category",
                "parallel",
                "--category",
                "irrelevance",
            ]
        )
        == 0
    )
    return out


@pytest.fixture(scope="module")
def suite(imported: Path) -> Suite:
    return load_suite(imported / "fcreplay.toml")


def verdict(suite: Suite, imported: Path, case_id: str, output: list[dict[str, Any]]) -> list[str]:
    names = load_names(imported / NAMES)
    return [f.code for f in judge_output(suite.case(case_id), suite.contract, names, output)]


def test_the_suite_keeps_names_types_tools_and_expectations(suite: Suite, imported: Path) -> None:
    names = load_names(imported / NAMES)
    assert names["geometry_triangle_area"] == "geometry.triangle_area"
    assert names["geometry_triangle_area__2"] == "geometry.triangle_area"  # another definition
    triangle = suite.contract.by_name["geometry_triangle_area"].parameters
    kinds = {name: prop["type"] for name, prop in triangle["properties"].items()}
    assert kinds == {
        "base": "integer",
        "height": "number",
        "unit": "string",
        "tags": "array",
        "meta": "object",
        "note": "string",
    }
    assert triangle["type"] == "object" and "optional" not in triangle["properties"]["note"]
    assert "Units" in triangle["properties"]["unit"]["enum"]  # an answer outside the enum joined it
    factorial = suite.contract.by_name["math_factorial"].parameters
    assert factorial["properties"]["mod"]["type"] == ["integer", "null"]  # a null answer
    case = suite.case("simple_python_1")
    assert [m.role for m in case.messages] == ["system", "user"]
    assert case.tools == ("math_factorial",) and case.expect.rules == "bfcl"
    assert suite.case("irrelevance_0").expect.kind == "no_call"
    assert suite.case("parallel_0").tags == ("bfcl", "parallel")
    assert "simple_python_3" not in {c.id for c in suite.cases}  # ends with the assistant
    assert {tool.effect for tool in suite.contract.tools} == {"write"}


def test_the_imported_suite_passes_lint(imported: Path) -> None:
    assert run(["lint", "--config", str(imported / "fcreplay.toml")]) == 0


@pytest.mark.parametrize(
    ("arguments", "codes"),
    [
        ({"base": 10, "height": 5}, []),  # int accepted for a float; omittable ones omitted
        (
            {"base": 10, "height": 5.0, "unit": "UNITS "},
            ["enum_mismatch"],
        ),  # BFCL accepts; the schema's enum does not
        ({"base": 10, "height": 5.0, "unit": "Units"}, []),  # an answer, standardised
        ({"base": 10.0, "height": 5}, ["argument_mismatch"]),  # a float for an integer
        ({"base": "10", "height": 5}, ["type_mismatch", "argument_mismatch"]),
        ({"base": 11, "height": 5}, ["argument_mismatch"]),
        ({"base": 10}, ["missing_required", "argument_mismatch"]),
        ({"base": 10, "height": 5, "extra": 1}, ["argument_mismatch"]),
        ({"base": 10, "height": 5, "tags": ["A", "b"]}, []),  # list strings standardised
        ({"base": 10, "height": 5, "tags": ["b", "a"]}, ["argument_mismatch"]),  # lists keep order
        ({"base": 10, "height": 5, "meta": {"source": "Book"}}, []),
        ({"base": 10, "height": 5, "meta": {}}, []),  # the dict's key may be omitted
        ({"base": 10, "height": 5, "meta": {"other": "x"}}, ["argument_mismatch"]),
        ({"base": 10, "height": 5, "note": "x"}, ["argument_mismatch"]),  # only omission allowed
    ],
)
def test_simple_entry_follows_bfcl(
    suite: Suite, imported: Path, arguments: dict[str, Any], codes: list[str]
) -> None:
    found = verdict(suite, imported, "simple_python_0", [{"geometry_triangle_area": arguments}])
    assert sorted(found) == sorted(codes)


def test_variable_null_answer_and_names_as_bfcl_or_underscored(
    suite: Suite, imported: Path
) -> None:
    assert (
        verdict(
            suite, imported, "simple_python_1", [{"math.factorial": {"number": 5, "mod": None}}]
        )
        == []
    )
    assert verdict(suite, imported, "simple_python_1", [{"math_factorial": {"number": 5}}]) == []
    assert "argument_mismatch" in verdict(
        suite, imported, "simple_python_1", [{"math_factorial": {"number": 5, "mod": 3}}]
    )
    assert verdict(suite, imported, "simple_python_1", [{"math.power": {"number": 5}}]) == [
        "unknown_tool"
    ]


def test_parallel_pairs_calls_in_bfcl_order(suite: Suite, imported: Path) -> None:
    paris, france, rome = ({"weather.get": {"city": c}} for c in ("Paris", "Paris, France", "Rome"))
    assert verdict(suite, imported, "parallel_0", [rome, paris]) == []
    assert verdict(suite, imported, "parallel_0", [france, paris]) == []
    # BFCL's first answer takes the first call that fits, "Paris"; "Paris, France" then
    # fits no answer left, although another pairing would pass: BFCL fails it, as do we.
    assert verdict(suite, imported, "parallel_0", [paris, france]) != []
    assert "missing_call" in verdict(suite, imported, "parallel_0", [paris])


def test_irrelevance_passes_without_a_call(suite: Suite, imported: Path) -> None:
    assert verdict(suite, imported, "irrelevance_0", []) == []
    assert "unexpected_call" in verdict(
        suite, imported, "irrelevance_0", [{"math.factorial": {"number": 1}}]
    )


def test_the_wheel_itself_is_read(tmp_path: Path, capsys: Any) -> None:
    wheel = tmp_path / "bfcl_eval-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path in FIXTURES.rglob("*.json"):
            archive.write(path, "bfcl_eval/data/" + path.relative_to(FIXTURES).as_posix())
    out = tmp_path / "suite"
    assert (
        run(["import", "bfcl", "--data", str(wheel), "--category", "parallel", "-o", str(out)]) == 0
    )
    assert "1 cases (parallel 1)" in capsys.readouterr().out
    lines = (out / "cases" / "bfcl.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["expect"]["rules"] == "bfcl"


def test_bad_category_and_missing_data_are_input_errors(tmp_path: Path, capsys: Any) -> None:
    args = ["import", "bfcl", "--data", str(FIXTURES), "-o", str(tmp_path / "s")]
    assert run([*args, "--category", "multi_turn_base"]) == 2
    assert "not a single-turn AST category" in capsys.readouterr().err
    assert run([*args, "--category", "multiple"]) == 2
    assert "BFCL_v4_multiple.json" in capsys.readouterr().err
    assert run(["import", "bfcl", "--data", str(tmp_path), "--category", "parallel"]) == 2
    assert "pip download --no-deps bfcl-eval" in capsys.readouterr().err
