"""The user docs cover every key the code accepts, the glossary's words, and each command's help."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from fcreplay.cli import COMMANDS, LazyGroup, cli
from fcreplay.inputs import config, matchers, tool_results
from fcreplay.inputs.cases import CALL_KEYS, CASE_KEYS, EXPECT_KEYS, EXPECTED_KINDS
from fcreplay.inputs.contract import _TOOL_KEYS
from fcreplay.render.glossary import GLOSSARY, NOTES
from fcreplay.simulator import reader
from fcreplay.simulator.from_cases import PROFILES
from fcreplay.simulator.script import FAULT_KINDS

from .conftest import ROOT

DOCS = ROOT / "docs"


def documented(page: str) -> set[str]:
    """Every `code span` of a docs page."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return set(re.findall(r"`([^`\n]+)`", text))


@pytest.mark.parametrize(
    ("page", "keys"),
    [
        ("config.md", set(config._SUITE_FIELDS) | {"targets"}),
        ("config.md", set(config._TARGET_FIELDS)),
        ("config.md", set(config.VARIANTS)),
        ("cases.md", set(CASE_KEYS) | set(EXPECT_KEYS) | set(CALL_KEYS) | set(EXPECTED_KINDS)),
        ("cases.md", set(matchers.MATCHER_KEYS) | set(matchers.RULE_SETS)),
        ("cases.md", {f'"{name}"' for name in matchers.SHORTHANDS}),
        ("cases.md", set(_TOOL_KEYS)),
        (
            "tool-results.md",
            tool_results.FILE_KEYS | tool_results.RULE_KEYS | tool_results.ERROR_KEYS,
        ),
        ("tool-results.md", {f'"{tool_results.ANY_TOOL}"'}),
        (
            "simulator.md",
            reader._SCRIPT_KEYS | reader._CASE_KEYS | reader._PROFILE_KEYS | reader._FILTER_KEYS,
        ),
        ("simulator.md", set(PROFILES) | set(FAULT_KINDS)),
        ("simulator.md", {key for keys in reader._FAULT_KEYS.values() for key in keys}),
    ],
)
def test_every_key_in_the_code_is_in_its_page(page: str, keys: set[str]) -> None:
    missing = sorted(keys - documented(page))
    assert not missing, f"docs/{page} lacks {missing}"


def test_metrics_page_uses_the_words_of_the_html_glossary() -> None:
    text = " ".join((DOCS / "metrics.md").read_text(encoding="utf-8").split())
    for term in GLOSSARY:
        assert f"`{term.name}`" in text
        assert term.definition in text, term.name
        assert f"Denominator: {term.denominator}." in text, term.name
    for name, words in NOTES:
        assert f"**{name}**: {words}" in text


def _commands(
    group: click.Group, ctx: click.Context, prefix: str
) -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, ctx, f"{prefix}{name} ")
    return found


def test_every_command_help_points_to_a_docs_page_that_exists() -> None:
    assert isinstance(cli, LazyGroup)
    ctx = click.Context(cli)
    listed = _commands(cli, ctx, "")
    assert {name.split()[0] for name, _ in listed} == set(COMMANDS)
    for name, command in listed:
        pages = re.findall(r"docs/[a-z-]+\.md", command.help or "")
        assert pages, f"fcreplay {name} --help names no docs page"
        for page in pages:
            assert (ROOT / page).is_file(), f"fcreplay {name}: {page} does not exist"


def test_docs_links_between_pages_resolve() -> None:
    for page in DOCS.glob("*.md"):
        for target in re.findall(
            r"\]\(([a-z-]+\.md)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")
        ):
            assert (DOCS / target).is_file(), f"{page.name} links to a missing {target}"


def test_readme_points_to_the_user_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in (
        "config.md",
        "cases.md",
        "tool-results.md",
        "simulator.md",
        "metrics.md",
        "importing.md",
    ):
        assert f"docs/{page}" in readme, page
    assert Path(ROOT / "docs" / "importing.md").is_file()
