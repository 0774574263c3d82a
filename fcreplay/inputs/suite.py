"""A loaded suite: configuration, contract, prompt, cases and fake executor, checked together."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fcreplay.canonical import canonical_hash
from fcreplay.errors import InputError, Problem
from fcreplay.inputs.cases import Case, load_cases
from fcreplay.inputs.config import SuiteConfig, load_config
from fcreplay.inputs.contract import Contract, load_contract
from fcreplay.inputs.tool_results import FakeExecutor, load_executor
from fcreplay.sources import read_text


@dataclass(frozen=True)
class Suite:
    """Everything a run needs from disk, already validated."""

    config: SuiteConfig
    contract: Contract
    system_prompt: str | None
    cases: tuple[Case, ...]
    executor: FakeExecutor | None
    cases_version: str
    """The configured version label, or a hash of the cases when none is set."""

    def case(self, case_id: str) -> Case:
        """Return the case with id `case_id` or raise an InputError naming the file."""
        for case in self.cases:
            if case.id == case_id:
                return case
        raise InputError.at(self.config.cases, None, f"no case with id {case_id!r}")


def load_suite(
    config: SuiteConfig | str | Path | None = None, *, cache: bool | None = None
) -> Suite:
    """Load and check every file of a suite, reporting all problems together.

    With `cache` (check's default), a contract and case file the suite's check cache
    knows passed the schema checks are not checked against schemas again
    (`fcreplay.inputs.checked`); False: they are, and are remembered afresh; None: no
    cache.
    """
    if not isinstance(config, SuiteConfig):
        config = load_config(config)
    checked = None
    if cache is not None:
        from fcreplay.inputs.checked import KnownGood

        checked = KnownGood(config.cache, read=cache)
    contract = load_contract(config.contract, checked=checked)
    problems: list[Problem] = []
    prompt = None
    if config.system_prompt is not None:
        try:
            prompt = read_text(config.system_prompt).strip()
            if not prompt:
                problems.append(Problem(config.system_prompt, None, "the prompt is empty"))
        except InputError as exc:
            problems += exc.problems
    cases: tuple[Case, ...] = ()
    try:
        cases = load_cases(config.cases, contract, checked=checked)
    except InputError as exc:
        problems += exc.problems
    executor = None
    if config.tool_results is not None:
        try:
            executor = load_executor(config.tool_results, contract)
        except InputError as exc:
            problems += exc.problems
    if problems:
        raise InputError(problems)
    if checked is not None:
        checked.save()
    version = config.cases_version or "sha256:" + canonical_hash(read_text(config.cases))[:12]
    return Suite(config, contract, prompt, cases, executor, version)
