"""What the attempts of one unit share, worked out once for the unit rather than per attempt."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.engine.plan import Unit, unit_settings, unit_tools
from fcreplay.inputs.suite import Suite
from fcreplay.neutral import HistoryItem, Message, RequestSettings, WireRequest

if TYPE_CHECKING:
    from fcreplay.finding import Finding
    from fcreplay.history import History
    from fcreplay.inputs.cases import Expectation
    from fcreplay.inputs.contract import Contract, ToolSpec
    from fcreplay.record import ExpectedOutline, SentSettings


class UnitWork:
    """A unit's tools, settings, opening messages, first request and judging inputs.

    Every attempt of a unit builds the same first request (from the same prompt,
    messages, tools and settings) and is judged against the same expectation and
    contract view; made here once, they are one object for all the unit's attempts.
    Nothing changes a request once built; a replayed one only takes the hash of the
    recording it matches, which is its own hash.
    """

    __slots__ = (
        "_first",
        "_later",
        "adapter",
        "contract",
        "expectation",
        "first_history",
        "first_request",
        "max_steps",
        "opening",
        "outline",
        "read_history",
        "sequential",
        "single_turn",
        "suite",
        "then",
        "tools",
        "unit",
    )

    def __init__(self, suite: Suite, unit: Unit, adapter: ClientAdapter) -> None:
        self.suite = suite
        self.unit = unit
        self.adapter = adapter
        self.single_turn = unit.single_turn
        self.max_steps = 1 if self.single_turn else suite.config.max_steps
        self.tools: list[ToolSpec] = unit_tools(suite, unit)
        opening: list[HistoryItem] = []
        if suite.system_prompt:
            opening.append(_system_message(suite.system_prompt))
        opening += unit.case.messages
        self.opening: tuple[HistoryItem, ...] = tuple(opening)
        """The history every attempt opens with: the system prompt, then the case's messages."""
        expectation = self.expectation = unit.expectation
        self.then: Expectation | None = unit.case.then
        # A call to a contract tool this case does not declare is an unknown tool here.
        self.contract: Contract = suite.contract.restricted(unit.case.tools)
        self.sequential = suite.config.parallel_tool_calls is False and len(expectation.calls) > 1
        self.first_request: WireRequest | None = None
        """Built by the first attempt that sends one (`conversation.converse`)."""
        self.first_history: tuple[Any, list[Finding]] | None = None
        """The first request's body and its history findings (`attempt._judge`)."""
        self.outline: tuple[SentSettings, ExpectedOutline] | None = None
        """The settings and expectation outline every record of the unit holds."""
        self._first: RequestSettings | None = None
        self._later: RequestSettings | None = None
        # What `judge.history.history_of` reads with, looked up once (None: the adapter
        # cannot read its requests' history back).
        self.read_history: Callable[[Any], History] | None = getattr(adapter, "read_history", None)

    def first_settings(self) -> RequestSettings:
        """The settings of a unit's first request (it may carry the case's tool choice)."""
        if self._first is None:
            self._first = unit_settings(self.suite, self.unit, 0)
        return self._first

    def later_settings(self) -> RequestSettings:
        """The settings of every request after the first (they are all alike)."""
        if self._later is None:
            self._later = unit_settings(self.suite, self.unit, 1)
        return self._later


_SYSTEM: list[Message] = []
"""The latest system prompt's message: a run has one prompt, and every unit opens with it."""


def _system_message(prompt: str) -> Message:
    if _SYSTEM and _SYSTEM[0].content is prompt:
        return _SYSTEM[0]
    message = Message("system", prompt)
    _SYSTEM[:] = [message]
    return message
