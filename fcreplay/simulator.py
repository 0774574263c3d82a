"""The bundled loopback provider simulator: a test and demo tool, never a claim about real models.

A real HTTP server (stdlib `ThreadingHTTPServer`, 127.0.0.1 by default) that
speaks the four wire formats through the adapters themselves: each POST is
routed by its path (`api_for_url`), read with the adapter's `read_request`,
answered from a script of decisions and written with `render_response`
(SSE when the request streams) or `render_error`.

Script schema (JSON; every key is checked on load, errors name the file, line and key)::

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

How an answer is picked for a request:

* Repetition: every request counts the times its key (path, model, last user text,
  tool-result turns, tool choice, tool order) was seen before: the n-th request of
  a key takes entry n (cyclically) of each CHOICE list. Later turns of a
  conversation reuse its first turn's number, read back from the call ids the
  simulator issued (`fcsim_r<N>_...`), so one repetition's turns stay coherent even
  when attempts run concurrently; a history without such ids counts its own key.
  Requests answered by a fault (other than a delay) do not count.
* Parallel policy: when the request asks for one call per turn (RequestView
  `parallel_tool_calls` is False), scripted turns are unrolled first: an answer with
  k > 1 calls becomes k consecutive single-call turns (the text beside the calls
  stays on the first), so the second call comes on the next request, after the
  first call's result.
* Tool choice: a request that declares no tools, or whose tool choice is "none",
  never gets calls: the profile's `no_tools` answer, else the scripted answer when
  it makes no call, else the first call-free entry of that turn's list, else
  `fallback_text`. A request forcing tool X gets one call to X: the profile's
  `forced[X]` answer, else the first scripted call to X in this turn's answer, then
  in any turn, else X with `{}` (forcing an undeclared tool is a 400, as on the real
  APIs). "required" gets the scripted answer when it calls, else the first scripted
  call in any turn, else the first declared tool with `{}`. "auto" gets the scripted
  answer, minus calls to tools the request does not declare. A turn past the end of
  the script answers `fallback_text`.
* Invalid arguments (`raw_arguments`): OpenAI Chat and Responses carry arguments as
  text and get it verbatim. Anthropic and Gemini carry JSON objects, so a model
  cannot send broken JSON there; the simulator sends the nearest real failure
  instead: Gemini ends the turn as a malformed call without the call (stop
  "malformed_call"), Anthropic cuts the call off at the output-token limit (stop
  "length", the partial input kept). All four parse as kind "invalid".

Not scripted: an unknown path is a plain 404 JSON; a body that is not a JSON object
is a 400 and an unscripted user text or model a 404, both in the provider's own error
envelope. Every answer carries `x-fcreplay-simulator: synthetic`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from .adapters import ADAPTERS, api_for_url, get_adapter
from .adapters._wire import is_retryable
from .cases import CASE_ID
from .decision import Decision, DecisionKind, ProviderError, Stop, ToolCall
from .errors import InputError, Problem
from .exchange import RequestView, StreamEvent, WireResponse
from .jsonsource import line_of, pointer
from .sourcefile import load_json
from .sse import format_sse

ANY_MODEL = "*"
"""Profile key that answers every model the case does not name."""

FALLBACK_TEXT = "I can't do that without my tools. Could you tell me more about what you need?"
"""Answer where the script has nothing better (no tools, past the last scripted turn)."""

SIMULATOR_HEADER = "x-fcreplay-simulator"

FaultKind = Literal["error", "malformed_json", "truncated_stream", "delay"]
FAULT_KINDS: tuple[FaultKind, ...] = ("error", "malformed_json", "truncated_stream", "delay")

_STRING_ARGUMENTS = frozenset({"openai_chat", "openai_responses"})
"""Formats whose calls carry arguments as JSON text, so broken JSON can go out verbatim."""
_BROKEN_CALL_STOP: dict[str, Stop] = {"gemini": "malformed_call", "anthropic": "length"}
"""What an object-argument format sends instead of unparseable arguments (see module doc)."""

_CALL_TAG = re.compile(rb"fcsim_r(\d+)_t\d+_\d+")
_CALL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ERROR_TEXT = {
    429: "Rate limit reached; retry later",
    500: "Internal server error",
    502: "Bad gateway",
    503: "Service unavailable",
    529: "Overloaded",
}

_SCRIPT_KEYS = frozenset({"note", "fallback_text", "faults", "cases"})
_CASE_KEYS = frozenset({"user", "profiles", "faults", "note"})
_PROFILE_KEYS = frozenset({"turns", "no_tools", "forced", "note"})
_ANSWER_KEYS = frozenset({"text", "calls", "refusal", "note"})
_CALL_KEYS = frozenset({"name", "arguments", "raw_arguments", "id"})
_FILTER_KEYS = frozenset({"model", "api", "turn", "stream"})
_FAULT_KEYS: dict[FaultKind, frozenset[str]] = {
    "error": frozenset({"status", "retry_after", "type", "code", "message", "in_stream"}),
    "malformed_json": frozenset(),
    "truncated_stream": frozenset({"keep_events"}),
    "delay": frozenset({"seconds"}),
}


# --- the script ----------------------------------------------------------------------


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

    def case_for(self, user_text: str | None) -> ScriptCase | None:
        """The case whose user message is `user_text` (both stripped), if any."""
        if user_text is None:
            return None
        return self._by_user.get(user_text.strip())

    @cached_property
    def _by_user(self) -> dict[str, ScriptCase]:
        # First case wins, as a scan in file order would.
        found: dict[str, ScriptCase] = {}
        for case in self.cases:
            found.setdefault(case.user.strip(), case)
        return found

    @cached_property
    def case_scopes(self) -> dict[str, int]:
        """Fault scope of each case: its position among the cases, plus one."""
        return {case.id: index + 1 for index, case in enumerate(self.cases)}


def load_script(path: str | Path) -> Script:
    """Load and check a script file; raise InputError naming the file, line and key."""
    path = Path(path)
    document, text = load_json(path)
    return parse_script(document, source=str(path), text=text)


def parse_script(document: Any, source: str = "<script>", text: str | None = None) -> Script:
    """Check a script document and build it; `text` (its JSON) lets errors give lines."""
    reader = _Reader(source, text)
    script = reader.script(document)
    if reader.problems:
        raise InputError(reader.problems)
    assert script is not None  # no problems means every part was built
    return script


class _Reader:
    """Builds a Script while collecting every problem, each with its key path and line."""

    def __init__(self, source: str, text: str | None) -> None:
        self.source = source
        self.text = text
        self.problems: list[Problem] = []

    def fail(self, where: tuple[str | int, ...], message: str) -> None:
        line = line_of(self.text, pointer(*where)) if self.text is not None else None
        self.problems.append(Problem(self.source, line, f"{_key_path(where)}: {message}"))

    def keys(
        self, raw: dict[str, Any], allowed: frozenset[str], where: tuple[str | int, ...]
    ) -> None:
        for key in sorted(set(raw) - allowed):
            self.fail((*where, key), f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def object(self, raw: Any, where: tuple[str | int, ...], what: str) -> dict[str, Any] | None:
        if isinstance(raw, dict):
            return raw
        self.fail(where, f"{what} must be a JSON object")
        return None

    def string(self, raw: dict[str, Any], key: str, where: tuple[str | int, ...]) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            self.fail((*where, key), "must be a non-empty string")
            return None
        return value

    def script(self, raw: Any) -> Script | None:
        document = self.object(raw, (), "a simulator script")
        if document is None:
            return None
        self.keys(document, _SCRIPT_KEYS, ())
        fallback = self.string(document, "fallback_text", ()) or FALLBACK_TEXT
        faults = self.faults(document.get("faults", []), ("faults",))
        cases_raw = document.get("cases")
        if not isinstance(cases_raw, dict) or not cases_raw:
            self.fail(("cases",), 'required: a non-empty object {"<case id>": {...}}')
            return None
        cases: list[ScriptCase] = []
        seen: dict[str, str] = {}
        for case_id, case_raw in cases_raw.items():
            case = self.case(case_id, case_raw, ("cases", case_id))
            if case is None:
                continue
            user = case.user.strip()
            if user in seen:
                self.fail(
                    ("cases", case_id, "user"),
                    f"same user message as case {seen[user]!r}: requests could not tell them apart",
                )
                continue
            seen[user] = case_id
            cases.append(case)
        return Script(tuple(cases), faults, fallback, self.source)

    def case(self, case_id: str, raw: Any, where: tuple[str | int, ...]) -> ScriptCase | None:
        if not CASE_ID.match(case_id):
            self.fail(where, f"case id must match {CASE_ID.pattern}")
        body = self.object(raw, where, "a case")
        if body is None:
            return None
        self.keys(body, _CASE_KEYS, where)
        user = self.string(body, "user", where)
        if user is None and "user" not in body:
            self.fail((*where, "user"), "required: the user message this case answers")
        faults = self.faults(body.get("faults", []), (*where, "faults"))
        profiles_raw = body.get("profiles")
        if not isinstance(profiles_raw, dict) or not profiles_raw:
            self.fail(
                (*where, "profiles"),
                'required: a non-empty object {"<model id>" or "*": {"turns": [...]}}',
            )
            return None
        profiles = {
            model: profile
            for model, profile_raw in profiles_raw.items()
            if (profile := self.profile(profile_raw, (*where, "profiles", model))) is not None
        }
        if user is None or len(profiles) != len(profiles_raw):
            return None
        return ScriptCase(case_id, user, profiles, faults)

    def profile(self, raw: Any, where: tuple[str | int, ...]) -> Profile | None:
        body = self.object(raw, where, "a profile")
        if body is None:
            return None
        self.keys(body, _PROFILE_KEYS, where)
        before = len(self.problems)
        turns_raw = body.get("turns")
        turns: list[Choice] = []
        if not isinstance(turns_raw, list) or not turns_raw:
            self.fail((*where, "turns"), "required: a non-empty list, one entry per turn")
        else:
            turns = [self.choice(item, (*where, "turns", i)) for i, item in enumerate(turns_raw)]
        no_tools: Choice = ()
        if "no_tools" in body:
            placed = self.placed_choice(body["no_tools"], (*where, "no_tools"))
            for spot, answer in placed:
                if answer.calls:
                    self.fail(spot, "an answer without tools cannot call")
            no_tools = tuple(answer for _, answer in placed)
        forced: dict[str, Choice] = {}
        forced_raw = body.get("forced", {})
        if not isinstance(forced_raw, dict):
            self.fail((*where, "forced"), 'must be an object {"<tool>": answer or [answers]}')
        else:
            for tool, item in forced_raw.items():
                placed = self.placed_choice(item, (*where, "forced", tool))
                for spot, answer in placed:
                    if not any(call.name == tool for call in answer.calls):
                        self.fail(spot, f"must call {tool!r}")
                forced[tool] = tuple(answer for _, answer in placed)
        if len(self.problems) != before:
            return None
        return Profile(tuple(turns), no_tools, forced)

    def choice(self, raw: Any, where: tuple[str | int, ...]) -> Choice:
        return tuple(answer for _, answer in self.placed_choice(raw, where))

    def placed_choice(
        self, raw: Any, where: tuple[str | int, ...]
    ) -> list[tuple[tuple[str | int, ...], Answer]]:
        """The answers of a choice, each with where it sits (for later messages)."""
        if isinstance(raw, list) and not raw:
            self.fail(where, "an empty list; give one answer or a list of answers")
        spots = [(*where, i) for i in range(len(raw))] if isinstance(raw, list) else [where]
        items = raw if isinstance(raw, list) else [raw]
        placed = ((spot, self.answer(item, spot)) for spot, item in zip(spots, items, strict=True))
        return [(spot, answer) for spot, answer in placed if answer is not None]

    def answer(self, raw: Any, where: tuple[str | int, ...]) -> Answer | None:
        body = self.object(raw, where, 'an answer ({"text"}, {"calls"} or {"refusal"})')
        if body is None:
            return None
        self.keys(body, _ANSWER_KEYS, where)
        text = self.string(body, "text", where)
        refusal = self.string(body, "refusal", where)
        calls: list[ScriptedCall | None] = []
        if "calls" in body:
            calls_raw = body["calls"]
            if not isinstance(calls_raw, list) or not calls_raw:
                self.fail((*where, "calls"), "must be a non-empty list of calls")
            else:
                calls = [self.call(c, (*where, "calls", i)) for i, c in enumerate(calls_raw)]
        if "refusal" in body and ("text" in body or "calls" in body):
            self.fail(where, 'a refusal stands alone (no "text" or "calls" beside it)')
        if not ({"text", "calls", "refusal"} & set(body)):
            self.fail(where, 'an answer needs "text", "calls" or "refusal"')
        if any(call is None for call in calls):
            return None
        return Answer(text, tuple(call for call in calls if call is not None), refusal)

    def call(self, raw: Any, where: tuple[str | int, ...]) -> ScriptedCall | None:
        body = self.object(raw, where, 'a call ({"name": ..., "arguments": {...}})')
        if body is None:
            return None
        self.keys(body, _CALL_KEYS, where)
        name = self.string(body, "name", where)
        if name is None:
            self.fail((*where, "name"), "required: the tool name")
        if ("arguments" in body) == ("raw_arguments" in body):
            self.fail(where, 'give exactly one of "arguments" (object) or "raw_arguments" (text)')
            return None
        arguments = body.get("arguments")
        if "arguments" in body and not isinstance(arguments, dict):
            self.fail((*where, "arguments"), "must be a JSON object")
            return None
        raw_arguments = body.get("raw_arguments")
        if "raw_arguments" in body and not _broken_json(raw_arguments):
            self.fail(
                (*where, "raw_arguments"),
                'must be text that is not a JSON object (use "arguments" for valid ones)',
            )
            return None
        call_id = body.get("id")
        if call_id is not None and not (isinstance(call_id, str) and _CALL_ID.match(call_id)):
            self.fail((*where, "id"), f"must match {_CALL_ID.pattern}")
            return None
        if name is None:
            return None
        return ScriptedCall(name, arguments, raw_arguments, call_id)

    def faults(self, raw: Any, where: tuple[str | int, ...]) -> tuple[Fault, ...]:
        if not isinstance(raw, list):
            self.fail(where, "must be a list of faults")
            return ()
        faults = (self.fault(item, (*where, i)) for i, item in enumerate(raw))
        return tuple(fault for fault in faults if fault is not None)

    def fault(self, raw: Any, where: tuple[str | int, ...]) -> Fault | None:
        body = self.object(raw, where, "a fault")
        if body is None:
            return None
        kind = body.get("kind")
        if kind not in FAULT_KINDS:
            self.fail((*where, "kind"), f"must be one of {', '.join(FAULT_KINDS)}")
            return None
        own = _FAULT_KEYS[kind]
        self.keys(body, own | _FILTER_KEYS | {"kind", "count", "note"}, where)
        before = len(self.problems)
        values: dict[str, Any] = {"kind": kind}
        count = body.get("count", 1)
        if count == "all":
            values["count"] = None
        elif _whole(count, 1):
            values["count"] = count
        else:
            self.fail((*where, "count"), 'must be a whole number of at least 1, or "all"')
        for key, (check, message) in _FAULT_CHECKS.items():
            if key in body and key in (own | _FILTER_KEYS):
                if check(body[key]):
                    values[key] = (
                        float(body[key]) if key in ("retry_after", "seconds") else body[key]
                    )
                else:
                    self.fail((*where, key), message)
        required = {"error": "status", "delay": "seconds"}.get(kind)
        if required is not None and required not in body:
            self.fail((*where, required), f"required for {kind} faults")
        if len(self.problems) != before:
            return None
        return Fault(**values)


_FAULT_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "status": (lambda v: _whole(v, 400) and v <= 599, "must be an HTTP status 400-599"),
    "retry_after": (lambda v: _number(v) and v >= 0, "must be seconds (>= 0)"),
    "seconds": (lambda v: _number(v) and v > 0, "must be seconds (> 0)"),
    "keep_events": (lambda v: _whole(v, 0), "must be a whole number of at least 0"),
    "in_stream": (lambda v: isinstance(v, bool), "must be true or false"),
    "stream": (lambda v: isinstance(v, bool), "must be true or false"),
    "turn": (lambda v: _whole(v, 0), "must be a whole number of at least 0"),
    "api": (lambda v: v in ADAPTERS, f"must be one of {', '.join(ADAPTERS)}"),
    **dict.fromkeys(
        ("type", "code", "message", "model"),
        (lambda v: isinstance(v, str) and bool(v), "must be a non-empty string"),
    ),
}
"""Checks of fault values (filters included), each with what to say when it fails."""


def _key_path(where: Sequence[str | int]) -> str:
    shown = ""
    for part in where:
        shown += f"[{part}]" if isinstance(part, int) else (f".{part}" if shown else part)
    return shown or "(top level)"


def _whole(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _broken_json(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return not isinstance(json.loads(value), dict)
    except ValueError:
        return True


# --- picking the answer -----------------------------------------------------------------


def pick(choice: Choice, repetition: int) -> Answer:
    """Entry `repetition` of a choice, cyclically."""
    return choice[repetition % len(choice)]


def unrolled_turns(profile: Profile, repetition: int, split: bool) -> list[Answer]:
    """The scripted answers per request turn; with `split`, one call per turn."""
    turns: list[Answer] = []
    for choice in profile.turns:
        answer = pick(choice, repetition)
        if split and len(answer.calls) > 1:
            turns.append(Answer(answer.text, answer.calls[:1]))
            turns.extend(Answer(calls=(call,)) for call in answer.calls[1:])
        else:
            turns.append(answer)
    return turns


def choose_answer(
    profile: Profile, view: RequestView, repetition: int, fallback_text: str
) -> Answer:
    """Apply the tool-choice, parallel and declared-tools rules (module doc) to the script."""
    split = view.parallel_tool_calls is False
    turns = unrolled_turns(profile, repetition, split)
    turn = view.tool_result_turns
    scripted = turns[turn] if turn < len(turns) else None
    declared = view.tool_names
    mode = view.tool_choice.mode
    if mode in ("none", "no_tools") or not declared:
        if profile.no_tools:
            return pick(profile.no_tools, repetition)
        if scripted is not None and not scripted.calls:
            return scripted
        if turn < len(profile.turns):
            quiet = next((a for a in profile.turns[turn] if not a.calls), None)
            if quiet is not None:
                return quiet
        return Answer(text=fallback_text)
    if mode == "forced" and view.tool_choice.tool is not None:
        tool = view.tool_choice.tool
        if tool in profile.forced:
            answer = pick(profile.forced[tool], repetition)
            return Answer(answer.text, answer.calls[:1]) if split else answer
        candidates = [*(scripted.calls if scripted else ()), *(c for a in turns for c in a.calls)]
        call = next((c for c in candidates if c.name == tool), ScriptedCall(tool, {}))
        return Answer(calls=(call,))
    if scripted is None:
        if mode != "required":
            return Answer(text=fallback_text)
        scripted = Answer()
    calls = tuple(call for call in scripted.calls if call.name in declared)
    if mode == "required" and not calls:
        later = (c for a in turns for c in a.calls if c.name in declared)
        return Answer(calls=(next(later, ScriptedCall(declared[0], {})),))
    if calls == scripted.calls:
        return scripted
    if calls:
        return Answer(scripted.text, calls)
    return Answer(text=scripted.text or fallback_text)


def to_decision(
    answer: Answer, api: str, model: str | None, repetition: int, turn: int
) -> Decision:
    """The Decision the adapter renders for an answer (call ids tagged with the repetition)."""
    if answer.refusal is not None:
        return Decision(kind="refusal", text=answer.refusal, stop="refusal", model=model)
    if not answer.calls:
        return Decision(kind="text", text=answer.text, stop="end", model=model)
    calls = tuple(
        ToolCall(
            call_id=call.call_id or f"fcsim_r{repetition}_t{turn}_{index}",
            name=call.name,
            arguments=call.arguments,
            raw_arguments=call.raw_arguments,
        )
        for index, call in enumerate(answer.calls)
    )
    if all(call.raw_arguments is None for call in calls):
        return Decision(
            kind="tool_call", text=answer.text, calls=calls, stop="tool_call", model=model
        )
    kind: DecisionKind = "invalid"
    if api in _STRING_ARGUMENTS:
        return Decision(kind=kind, text=answer.text, calls=calls, stop="tool_call", model=model)
    stop = _BROKEN_CALL_STOP.get(api, "malformed_call")
    if stop == "malformed_call":
        return Decision(kind=kind, text=answer.text, stop=stop, model=model)
    return Decision(kind=kind, text=answer.text, calls=calls, stop=stop, model=model)


# --- the HTTP side -----------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """What the handler writes: a whole body, or stream chunks written one by one."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    chunks: tuple[bytes, ...] | None = None
    """Stream pieces (SSE events); sent chunked, or raw then closed when `cut`."""
    cut: bool = False
    """Close the connection after the chunks, without a length or a final chunk."""
    delay: float = 0.0


class Simulator:
    """Answers requests from a script; thread-safe (one lock guards every counter)."""

    def __init__(self, script: Script, latency: float = 0.0) -> None:
        self.script = script
        self.latency = latency
        self._lock = threading.Lock()
        self._seen: dict[tuple[Any, ...], int] = {}
        self._fired: dict[tuple[int, int], int] = {}

    def handle(self, method: str, path: str, body: bytes) -> Reply:
        """Answer one HTTP request (never raises for a bad request)."""
        if method != "POST":
            return self.plain(405, f"fcreplay simulator: {method} is not supported; POST")
        api = api_for_url(path)
        if api is None:
            return self.plain(404, f"fcreplay simulator: no provider API at POST {path}")
        adapter = get_adapter(api)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            error = _provider_error(
                400, "fcreplay simulator: the request body is not a JSON object"
            )
            return self._rendered(adapter.render_error(error), path, api)
        view = adapter.read_request(request, path)
        case = self.script.case_for(view.last_user_text)
        fault = self._fault(api, view, case)
        delay = self.latency + (fault.seconds if fault is not None else 0.0)
        if fault is not None and fault.kind == "error":
            error = _provider_error(fault.status, fault.message, fault)
            stream = view.stream and fault.in_stream
            reply = self._rendered(adapter.render_error(error, stream=stream), path, api, delay)
            if fault.retry_after is not None:
                reply.headers.setdefault("retry-after", _seconds_text(fault.retry_after))
            return reply
        if case is None:
            shown = (view.last_user_text or "")[:80]
            message = f"fcreplay simulator: no scripted case for the user message {shown!r}"
            return self._rendered(adapter.render_error(_provider_error(404, message)), path, api)
        profile = case.profile(view.model)
        if profile is None:
            message = (
                f"fcreplay simulator: model {view.model!r} is not scripted for case {case.id!r} "
                f"(scripted: {', '.join(case.profiles)})"
            )
            return self._rendered(adapter.render_error(_provider_error(404, message)), path, api)
        forced = view.tool_choice.tool if view.tool_choice.mode == "forced" else None
        if forced is not None and forced not in view.tool_names:
            message = f"fcreplay simulator: tool_choice forces {forced!r}, which is not declared"
            return self._rendered(adapter.render_error(_provider_error(400, message)), path, api)
        counted = fault is None or fault.kind == "delay"
        repetition = self._repetition(path, view, body, counted)
        answer = choose_answer(profile, view, repetition, self.script.fallback_text)
        decision = to_decision(answer, api, view.model, repetition, view.tool_result_turns)
        wire = adapter.render_response(decision, stream=view.stream)
        if fault is not None and fault.kind == "malformed_json":
            wire = _malformed(wire)
        keep = None
        if fault is not None and fault.kind == "truncated_stream" and wire.events is not None:
            total = len(wire.events)
            keep = min(
                fault.keep_events if fault.keep_events is not None else total // 2, total - 1
            )
        return self._rendered(wire, path, api, delay, keep=keep)

    def _fault(self, api: str, view: RequestView, case: ScriptCase | None) -> Fault | None:
        scopes = [(0, self.script.faults)]
        if case is not None:
            scopes.append((self.script.case_scopes[case.id], case.faults))
        with self._lock:
            for scope, faults in scopes:
                for index, fault in enumerate(faults):
                    key = (scope, index)
                    if not fault.matches(api, view):
                        continue
                    if fault.count is not None and self._fired.get(key, 0) >= fault.count:
                        continue
                    self._fired[key] = self._fired.get(key, 0) + 1
                    return fault
        return None

    def _repetition(self, path: str, view: RequestView, body: bytes, counted: bool) -> int:
        key = (
            path,
            view.model,
            (view.last_user_text or "").strip(),
            view.tool_result_turns,
            view.tool_choice,
            view.tool_names,
        )
        with self._lock:
            seen = self._seen.get(key, 0)
            if counted:
                self._seen[key] = seen + 1
        if view.tool_result_turns > 0:
            tags = _CALL_TAG.findall(body)
            if tags:
                return int(tags[-1])
        return seen

    def plain(self, status: int, message: str) -> Reply:
        body = json.dumps({"error": {"message": message, "type": "fcreplay_simulator"}})
        headers = {"content-type": "application/json", SIMULATOR_HEADER: "synthetic"}
        return Reply(status, headers, body.encode("utf-8"), delay=self.latency)

    def _rendered(
        self,
        wire: WireResponse,
        path: str,
        api: str,
        delay: float | None = None,
        keep: int | None = None,
    ) -> Reply:
        headers = {key.lower(): value for key, value in wire.headers.items()}
        headers[SIMULATOR_HEADER] = "synthetic"
        delay = self.latency if delay is None else delay
        if wire.events is None:
            headers.setdefault("content-type", "application/json")
            return Reply(wire.status, headers, _body_bytes(wire.body), delay=delay)
        events = wire.events if keep is None else wire.events[:keep]
        if api == "gemini" and "alt=sse" not in path:
            # Without alt=sse Gemini streams one JSON array of the chunks.
            headers["content-type"] = "application/json; charset=UTF-8"
            text = json.dumps([event.data for event in events], ensure_ascii=False)
            if keep is not None:
                text = text[:-1]  # the array never closes
            return Reply(
                wire.status, headers, text.encode("utf-8"), cut=keep is not None, delay=delay
            )
        headers.setdefault("content-type", "text/event-stream")
        headers["cache-control"] = "no-cache"
        chunks = tuple(format_sse([event]).encode("utf-8") for event in events)
        return Reply(wire.status, headers, chunks=chunks, cut=keep is not None, delay=delay)


def _provider_error(status: int, message: str | None, fault: Fault | None = None) -> ProviderError:
    text = message or (
        f"{_ERROR_TEXT.get(status, 'Error')} (fcreplay simulator: injected {status} fault)"
    )
    return ProviderError(
        status=status,
        type=fault.type if fault is not None else None,
        code=fault.code if fault is not None else None,
        message=text,
        retryable=is_retryable(status),
        retry_after=fault.retry_after if fault is not None else None,
    )


def _malformed(wire: WireResponse) -> WireResponse:
    """The same answer with its JSON cut in half: the body, or the first JSON event."""
    if wire.events is None:
        text = (
            wire.body if isinstance(wire.body, str) else json.dumps(wire.body, ensure_ascii=False)
        )
        return WireResponse(200, dict(wire.headers), text[: len(text) // 2])
    events = list(wire.events)
    for index, event in enumerate(events):
        if isinstance(event.data, dict | list):
            text = json.dumps(event.data, ensure_ascii=False)
            events[index] = StreamEvent(event.event, text[: len(text) // 2])
            break
    return WireResponse(200, dict(wire.headers), events=tuple(events))


def _body_bytes(body: Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _seconds_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so clients reuse connections
    server_version = "fcreplay-simulator"
    sys_version = ""
    disable_nagle_algorithm = True  # header and body writes must not wait for delayed ACKs
    timeout = 60  # an idle keep-alive connection gives its thread back eventually
    server: SimulatorServer

    def do_POST(self) -> None:
        length = self.headers.get("content-length")
        if length is None or not length.isdigit():
            self._write(self.server.simulator.plain(411, "a request body needs Content-Length"))
            return
        body = self.rfile.read(int(length))
        self._write(self.server.simulator.handle("POST", self.path, body))

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != "/":
            self._write(self.server.simulator.plain(404, f"no resource at GET {self.path}"))
            return
        info = {
            "simulator": "fcreplay",
            "note": "Synthetic loopback provider simulator: a test and demo tool, "
            "never a source of claims about real models.",
            "script": self.server.simulator.script.source,
            "cases": [case.id for case in self.server.simulator.script.cases],
        }
        headers = {"content-type": "application/json", SIMULATOR_HEADER: "synthetic"}
        self._write(Reply(200, headers, json.dumps(info, ensure_ascii=False).encode("utf-8")))

    def _write(self, reply: Reply) -> None:
        if reply.delay > 0:
            time.sleep(reply.delay)  # this connection's own thread: other requests go on
        try:
            self.send_response(reply.status)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            if reply.chunks is None and not reply.cut:
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
                return
            if reply.cut:
                # No length and no chunking: the client reads until the connection closes.
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(b"".join(reply.chunks or (reply.body,)))
                self.close_connection = True
                return
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in reply.chunks or ():
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a request log would drown the output of the tool using the simulator."""


class SimulatorServer(ThreadingHTTPServer):
    """A threaded HTTP server (one thread per connection) answering from a Simulator."""

    daemon_threads = True
    block_on_close = False  # clients may hold keep-alive connections open
    request_queue_size = 128  # bursts of concurrent clients must not wait on the backlog

    def __init__(self, simulator: Simulator, host: str = "127.0.0.1", port: int = 0) -> None:
        self.simulator = simulator
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        """Base URL of the server, e.g. http://127.0.0.1:8765."""
        host, port = self.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{port}"


ScriptSource = Script | str | Path | Mapping[str, Any]


def as_script(script: ScriptSource) -> Script:
    """A Script from a Script, a script file path, or a script document."""
    if isinstance(script, Script):
        return script
    if isinstance(script, str | Path):
        return load_script(script)
    return parse_script(dict(script))


def make_server(
    script: ScriptSource, host: str = "127.0.0.1", port: int = 0, latency: float = 0.0
) -> SimulatorServer:
    """Bind a simulator server (port 0 picks a free port); call serve_forever to run it."""
    return SimulatorServer(Simulator(as_script(script), latency), host, port)


@contextmanager
def running_simulator(
    script: ScriptSource, host: str = "127.0.0.1", port: int = 0, latency: float = 0.0
) -> Iterator[str]:
    """Run a simulator in a background thread for the block; yield its base URL."""
    server = make_server(script, host, port, latency)
    # A short poll interval makes leaving the block quick (shutdown waits for one poll).
    thread = threading.Thread(
        target=server.serve_forever, args=(0.02,), name="fcreplay-simulator", daemon=True
    )
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def base_urls(url: str) -> dict[str, str]:
    """The base_url to configure for each adapter to reach a simulator at `url`."""
    from urllib.parse import urlsplit

    return {
        name: url + urlsplit(get_adapter(name).DEFAULT_BASE_URL).path.rstrip("/")
        for name in ADAPTERS
    }
