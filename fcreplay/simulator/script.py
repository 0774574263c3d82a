"""The simulator's script: the scripted cases, profiles, answers and faults it is read into.

Script schema (JSON; every key is checked on load by `simulator.reader`, errors name
the file, line and key)::

    {
      "note": "...",                              optional, free text
      "fallback_text": "...",                     optional; default FALLBACK_TEXT
      "faults": [FAULT, ...],                     optional; tried for every request
      "cases": {
        "<case id>": {
          "user": "...",                          required; matched to the request's last
                                                  user message (exact, after strip)
          "note": "...",                          optional
          "faults": [FAULT, ...],                 optional; tried after the global ones
          "profiles": {                           required; key = request model id, or "*"
            "<model id>": {                       for any model not listed
              "turns": [CHOICE, CHOICE, ...],     required; [i] answers the request with i
                                                  tool-result turns in its history
              "no_tools": CHOICE,                 optional; request without usable tools
              "forced": {"<tool>": CHOICE},       optional; request forcing that tool
              "note": "..."
            }
          }
        }
      }
    }

    CHOICE = ANSWER | [ANSWER, ...]    a list varies between repetitions (cyclically)
    ANSWER = {"text": "..."}
           | {"calls": [CALL, ...], "text": "..."}     text beside calls is optional
           | {"refusal": "..."}
    CALL   = {"name": "...", "arguments": {...}}
           | {"name": "...", "raw_arguments": "<text that is not a JSON object>"}
             (optional "id"; by default the simulator names calls fcsim_r<rep>_t<turn>_<i>)
    FAULT  = {"kind": "error", "status": 429, "retry_after": 2}   any 4xx/5xx status;
                 optional "type", "code", "message" (else the adapter's natural ones) and
                 "in_stream": true (a streaming request gets an error event inside a 200
                 stream, where the format has one)
           | {"kind": "malformed_json"}      200 whose body (or first stream event) is cut JSON
           | {"kind": "truncated_stream", "keep_events": 3}   streaming requests only: the
                 connection closes cleanly after that many events (default: half), before
                 the terminal event
           | {"kind": "delay", "seconds": 1.5}   then answers normally
           Every fault has "count": N (default 1) or "all": it fires for the first N requests
           it matches, so a retry then succeeds. Optional filters: "model", "api" (adapter
           name), "turn" (tool-result turns), "stream" (true/false). The first fault in
           order (global, then the case's) that matches and has count left fires.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from fcreplay.neutral import RequestView

ANY_MODEL = "*"
"""Profile key that answers every model the case does not name."""

FALLBACK_TEXT = "I can't do that without my tools. Could you tell me more about what you need?"
"""Answer where the script has nothing better (no tools, past the last scripted turn)."""

FaultKind = Literal["error", "malformed_json", "truncated_stream", "delay"]
FAULT_KINDS: tuple[FaultKind, ...] = ("error", "malformed_json", "truncated_stream", "delay")


@dataclass(frozen=True)
class ScriptedCall:
    """One call the simulated model makes: decoded arguments, or raw text that is not JSON."""

    name: str
    arguments: dict[str, Any] | None = None
    raw_arguments: str | None = None
    call_id: str | None = None


@dataclass(frozen=True)
class Answer:
    """One scripted model turn: text, calls (optionally with text) or a refusal."""

    text: str | None = None
    calls: tuple[ScriptedCall, ...] = ()
    refusal: str | None = None


Choice = tuple[Answer, ...]
"""Entries of one scripted situation; repetitions take them in turn, cyclically."""


@dataclass(frozen=True)
class Profile:
    """How one model (or any model) behaves in one case."""

    turns: tuple[Choice, ...]
    no_tools: Choice = ()
    forced: Mapping[str, Choice] = field(default_factory=dict)


@dataclass(frozen=True)
class Fault:
    """An injected failure for the first `count` matching requests (None: all of them)."""

    kind: FaultKind
    count: int | None = 1
    status: int = 500
    retry_after: float | None = None
    type: str | None = None
    code: str | None = None
    message: str | None = None
    in_stream: bool = False
    keep_events: int | None = None
    seconds: float = 0.0
    model: str | None = None
    api: str | None = None
    turn: int | None = None
    stream: bool | None = None

    def matches(self, api: str, view: RequestView) -> bool:
        """Whether this fault applies to a request (its filters, and streams for truncation)."""
        if self.kind == "truncated_stream" and not view.stream:
            return False
        return (
            (self.model is None or self.model == view.model)
            and (self.api is None or self.api == api)
            and (self.turn is None or self.turn == view.tool_result_turns)
            and (self.stream is None or self.stream == view.stream)
        )


@dataclass(frozen=True)
class ScriptCase:
    """The scripted behaviour for one case, found by its user message."""

    id: str
    user: str
    profiles: Mapping[str, Profile]
    faults: tuple[Fault, ...] = ()
    tools: frozenset[str] | None = None
    """The tools the case declares, telling apart cases that share a user message
    (answers made from the cases); None for scripted cases."""

    def profile(self, model: str | None) -> Profile | None:
        """The profile for `model`, else the "*" profile, else None."""
        found = self.profiles.get(model) if model is not None else None
        return found if found is not None else self.profiles.get(ANY_MODEL)


@dataclass(frozen=True)
class Script:
    """A whole simulator script."""

    cases: tuple[ScriptCase, ...]
    faults: tuple[Fault, ...] = ()
    fallback_text: str = FALLBACK_TEXT
    source: str = "<script>"

    def case_for(
        self, user_text: str | None, tools: Iterable[str] | None = None
    ) -> ScriptCase | None:
        """The case whose user message is `user_text` (both stripped), if any; of several,
        the first that declares exactly `tools`, else the first."""
        if user_text is None:
            return None
        found = self._by_user.get(user_text.strip())
        if not found:
            return None
        if tools is not None and len(found) > 1:
            declared = frozenset(tools)
            return next((case for case in found if case.tools == declared), found[0])
        return found[0]

    @cached_property
    def _by_user(self) -> dict[str, list[ScriptCase]]:
        # In file order, so the first case wins, as a scan would.
        found: dict[str, list[ScriptCase]] = {}
        for case in self.cases:
            found.setdefault(case.user.strip(), []).append(case)
        return found

    @cached_property
    def case_scopes(self) -> dict[str, int]:
        """Fault scope of each case: its position among the cases, plus one."""
        return {case.id: index + 1 for index, case in enumerate(self.cases)}
