"""fcreplay's verdict against BFCL's own ast_checker, on calls made from BFCL's possible answers.

Needs the bfcl-eval 2026.3.23 wheel (obtained by `pip download` into a cache under the
temporary folder, see tests/bfcl_oracle.py); skipped when it cannot be had. A sample of
each category, deterministic: one correct and three perturbed outputs per entry.
The full run is `python benchmarks/bfcl_agreement.py`.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fcreplay.cli import run
from fcreplay.importers.bfcl import NAMES, import_bfcl, write_suite
from fcreplay.importers.bfcl_data import CATEGORIES
from fcreplay.importers.bfcl_judge import judge_output, load_names
from fcreplay.importers.bfcl_schema import json_type
from fcreplay.inputs.suite import load_suite
from fcreplay.judge.bfcl import standardize

from .bfcl_oracle import Oracle, data_folder, load_oracle, obtain_wheel, outputs, read_category

ENTRIES = 80
"""Entries sampled per category (spread over the file)."""
PERTURBED = 3
SCHEMA_ONLY = {"enum_mismatch", "pattern_mismatch"}
"""The one known kind of disagreement: the schema's enum or format, which BFCL never checks."""


@pytest.fixture(scope="module")
def oracle() -> tuple[Oracle, Path]:
    wheel = obtain_wheel()
    if wheel is None:
        pytest.skip("the bfcl-eval wheel could not be downloaded")
    return load_oracle(wheel), data_folder(wheel)


def test_import_of_the_four_ast_categories_passes_lint(
    oracle: tuple[Oracle, Path], tmp_path: Path
) -> None:
    _, data = oracle
    out = tmp_path / "suite"
    command = ["import", "bfcl", "--data", str(data), "-o", str(out)]
    for category in ("simple_python", "multiple", "parallel", "parallel_multiple"):
        command += ["--category", category]
    assert run(command) == 0
    assert run(["lint", "--config", str(out / "fcreplay.toml")]) == 0
    assert len(load_suite(out / "fcreplay.toml").cases) == 1000


def test_verdicts_agree_with_bfcls_checker(oracle: tuple[Oracle, Path], tmp_path: Path) -> None:
    checker, data = oracle
    totals = {
        category: _agreement(checker, data, tmp_path / category, category)
        for category in CATEGORIES
    }
    calls = sum(n for n, _ in totals.values())
    agree = sum(a for _, a in totals.values())
    assert agree / calls >= 0.99, totals
    for category, (n, a) in totals.items():
        assert n >= 3 * 20 and a / n >= 0.97, (category, a, n)


def _agreement(checker: Oracle, data: Path, folder: Path, category: str) -> tuple[int, int]:
    """(calls, agreeing verdicts) over a sample of one category; asserts each disagreement
    is the explained kind."""
    write_suite(import_bfcl(data, [category]), folder)
    suite = load_suite(folder / "fcreplay.toml")
    names = load_names(folder / NAMES)
    entries = read_category(data, category)
    rng = random.Random(f"fcreplay-14:{category}")
    sample = sorted(rng.sample(range(len(entries)), min(ENTRIES, len(entries))))
    calls = agree = 0
    for index in sample:
        entry, truth = entries[index]
        case = suite.case(entry["id"])
        for _kind, output in outputs(entry, truth, rng, PERTURBED):
            bfcl = checker.valid(category, entry, truth, output)
            findings = judge_output(case, suite.contract, names, output)
            calls += 1
            if bfcl == (not findings):
                agree += 1
                continue
            # Every disagreement is explained: BFCL accepts a string its standardisation
            # maps onto an allowed one, fcreplay's schema check refuses it (enum, format).
            assert bfcl, f"{entry['id']}: BFCL rejects {output}, fcreplay passes it"
            assert {f.code for f in findings} <= SCHEMA_ONLY, (entry["id"], findings)
            for finding in findings:
                assert json_type(finding.actual) == "string"
                if finding.code == "enum_mismatch":
                    allowed = {standardize(v) for v in finding.expected if isinstance(v, str)}
                    assert standardize(finding.actual) in allowed
    return calls, agree
