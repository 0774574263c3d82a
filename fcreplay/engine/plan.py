"""What a run does: units of target × variant × case, each with its request settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from fcreplay.adapters.registry import get_adapter
from fcreplay.errors import InputError
from fcreplay.inputs.cases import Case, Expectation
from fcreplay.inputs.config import VARIANTS, Target
from fcreplay.inputs.contract import ToolSpec
from fcreplay.inputs.suite import Suite
from fcreplay.neutral import RequestSettings, ToolChoice

NO_TOOLS_EXPECTATION = Expectation("text", must_not_call=True)
"""The control run declares no tools, so any parsed call is a normalizer bug."""


@dataclass(frozen=True)
class Unit:
    """One cassette's worth of work: every repetition of one case, variant and target."""

    target: Target
    variant: str
    case: Case

    def cassette_path(self, cassettes: Path) -> Path:
        """cassettes/<target>/<variant>/<case_id>.json"""
        return self.cassette_folder(cassettes) / self.cassette_name

    def cassette_folder(self, cassettes: Path) -> Path:
        """cassettes/<target>/<variant>, which the cassettes of a target's variant share."""
        return cassettes / self.target.name / self.variant

    @property
    def cassette_name(self) -> str:
        """<case_id>.json"""
        return f"{self.case.id}.json"

    @cached_property
    def label(self) -> str:
        """target/variant/case, as shown in progress and errors."""
        # Kept: a run asks each unit's label about ten times (plan, cache, log, progress).
        return f"{self.target.name}/{self.variant}/{self.case.id}"

    @property
    def single_turn(self) -> bool:
        """Forced and control runs measure one turn only: there is nothing to continue."""
        return self.variant in ("forced", "no_tools")

    @property
    def expectation(self) -> Expectation:
        """What the first turn is checked against in this variant."""
        return NO_TOOLS_EXPECTATION if self.variant == "no_tools" else self.case.expect


def forced_tool(case: Case) -> str | None:
    """The tool the forced variant forces; only cases expecting exactly one call have one.

    Forcing measures how well arguments are filled once the tool is chosen, in
    one turn; a case that needs several calls cannot be answered in one forced turn.
    """
    calls = case.expect.calls
    return calls[0].tool if case.expect.kind == "tool_call" and len(calls) == 1 else None


def plan_units(
    suite: Suite,
    *,
    targets: Sequence[str] = (),
    variants: Sequence[str] = (),
    case_ids: Sequence[str] = (),
) -> list[Unit]:
    """Units in a stable order (target, variant, case), filtered by the selections.

    A name selected twice counts once, so no attempt is run or logged twice.
    """
    selection = (tuple(targets), tuple(variants), tuple(case_ids))
    for owner, chosen, known in _PLANNED[:1]:  # a copy: another thread may plan meanwhile
        if owner is suite and chosen == selection:
            return list(known)
    units = _plan_units(suite, targets, variants, case_ids)
    _PLANNED[:] = [(suite, selection, tuple(units))]
    return units


_PLANNED: list[tuple[Suite, tuple[tuple[str, ...], ...], tuple[Unit, ...]]] = []
"""The latest suite's plan and its selection: a check plans its units more than once
(the cache, the replay), and the same unit objects keep what they worked out."""


def _plan_units(
    suite: Suite, targets: Sequence[str], variants: Sequence[str], case_ids: Sequence[str]
) -> list[Unit]:
    config = suite.config
    targets, variants, case_ids = (list(dict.fromkeys(s)) for s in (targets, variants, case_ids))
    chosen_targets = [config.target(name) for name in targets] or list(config.targets)
    if not chosen_targets:
        raise InputError.at(
            config.source, None, "no targets configured: add [[tool.fcreplay.targets]]"
        )
    for variant in variants:
        if variant not in VARIANTS:
            raise InputError.at(
                config.source, None, f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})"
            )
    chosen_variants = [v for v in config.variants if not variants or v in variants]
    chosen_variants += [v for v in variants if v not in chosen_variants]
    cases = [suite.case(case_id) for case_id in case_ids] or list(suite.cases)
    return [
        Unit(target, variant, case)
        for target in chosen_targets
        for variant in chosen_variants
        for case in cases
        if variant != "forced" or forced_tool(case) is not None
    ]


def unit_tools(suite: Suite, unit: Unit) -> list[ToolSpec]:
    """The tools declared in this unit's requests, in the order sent."""
    if unit.variant == "no_tools":
        return []
    tools = list(suite.contract.restricted(unit.case.tools).tools)
    return tools[::-1] if unit.variant == "reversed" else tools


_SETTINGS: list[tuple[Suite, dict[tuple[int, bool], tuple[Unit, RequestSettings]]]] = []
"""The settings already made for the units of the latest suite, by unit and first step
or not: each request asks again. Only one suite's are kept, so none is held for long,
and only for the latest units (those in progress): a replay's workers run each unit
once, and `_CHOSEN` makes the settings of another unit cheaply."""
_UNITS_HELD = 512
_SETTINGS_LIMIT = 1 << 18


def unit_settings(suite: Suite, unit: Unit, step: int) -> RequestSettings:
    """Request settings for one step of one unit (only the first step differs)."""
    owner, made = _SETTINGS[0] if _SETTINGS else (None, {})
    if owner is not suite or len(made) >= _UNITS_HELD:  # another suite, or other units
        made = {}
        _SETTINGS[:] = [(suite, made)]
    key = (id(unit), step == 0)
    hit = made.get(key)
    # The entry holds the unit, so its id is not reused while the entry exists.
    if hit is not None and hit[0] is unit:
        return hit[1]
    settings = _unit_settings(suite, unit, step)
    made[key] = (unit, settings)
    return settings


_CHOSEN: list[
    tuple[Suite, dict[tuple[int, str, str, str | None], tuple[Target, RequestSettings]]]
] = []
"""The latest suite's settings by target (its id), variant and tool choice (its mode and
tool, which are all a `ToolChoice` holds): what they depend on besides the suite, alike
for most of a target's units (one object for all)."""
_NO_TOOLS = ToolChoice("no_tools")
_AUTO = ToolChoice("auto")


def _unit_settings(suite: Suite, unit: Unit, step: int) -> RequestSettings:
    if unit.variant == "no_tools":
        choice = _NO_TOOLS
    elif unit.variant == "forced":
        choice = ToolChoice("forced", forced_tool(unit.case))
    elif step == 0:
        choice = unit.case.tool_choice
    else:
        choice = _AUTO  # a case's choice is for its first turn only
    owner, chosen = _CHOSEN[0] if _CHOSEN else (None, {})
    if owner is not suite or len(chosen) > _SETTINGS_LIMIT:
        chosen = {}
        _CHOSEN[:] = [(suite, chosen)]
    key = (id(unit.target), unit.variant, choice.mode, choice.tool)
    hit = chosen.get(key)
    if hit is not None and hit[0] is unit.target:  # held: the id is not reused meanwhile
        return hit[1]
    settings = _made_settings(suite, unit.target, unit.variant, choice)
    chosen[key] = (unit.target, settings)
    return settings


def _made_settings(
    suite: Suite, target: Target, variant: str, choice: ToolChoice
) -> RequestSettings:
    config = suite.config
    values: dict[str, Any] = {
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_output_tokens": config.max_output_tokens,
        "parallel_tool_calls": config.parallel_tool_calls,
    }
    # Settings recent models of a format reject come only from the target's own table.
    for name in get_adapter(target.adapter).CAPABILITIES.opt_in_settings:
        values[name] = None
    values.update(target.settings.as_dict())
    if variant == "no_tools":
        values["parallel_tool_calls"] = None  # no tools, no policy for them
    return RequestSettings(tool_choice=choice, strict=target.strict, stream=target.stream, **values)
