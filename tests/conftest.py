"""Shared fixtures: the example suite's files, and a copy of them to break in tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fcreplay.inputs.contract import Contract, load_contract

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "contracts" / "delivery_tools.json"
CASES = ROOT / "cases" / "delivery.jsonl"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def contract() -> Contract:
    return load_contract(CONTRACT)


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    """A copy of the example suite (config, contract, prompt, cases) in a temp folder."""
    for folder in ("contracts", "cases"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = text[text.index("[tool.fcreplay]") :]
    (tmp_path / "fcreplay.toml").write_text(
        table.replace("[tool.fcreplay]\n", "").replace("[[tool.fcreplay.targets]]", "[[targets]]"),
        encoding="utf-8",
    )
    return tmp_path
