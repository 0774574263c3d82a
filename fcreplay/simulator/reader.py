"""Reading a simulator script: every key checked, each problem named by file, line and key path."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fcreplay.adapters.registry import adapters
from fcreplay.errors import InputError, Problem
from fcreplay.inputs.cases import CASE_ID
from fcreplay.simulator.script import (
    FALLBACK_TEXT,
    FAULT_KINDS,
    Answer,
    Choice,
    Fault,
    FaultKind,
    Profile,
    Script,
    ScriptCase,
    ScriptedCall,
)
from fcreplay.sources import line_of, load_json, pointer

_CALL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

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
                    self.fail((*where, key), message if isinstance(message, str) else message())
        required = {"error": "status", "delay": "seconds"}.get(kind)
        if required is not None and required not in body:
            self.fail((*where, required), f"required for {kind} faults")
        if len(self.problems) != before:
            return None
        return Fault(**values)


_FAULT_CHECKS: dict[str, tuple[Callable[[Any], bool], str | Callable[[], str]]] = {
    "status": (lambda v: _whole(v, 400) and v <= 599, "must be an HTTP status 400-599"),
    "retry_after": (lambda v: _number(v) and v >= 0, "must be seconds (>= 0)"),
    "seconds": (lambda v: _number(v) and v > 0, "must be seconds (> 0)"),
    "keep_events": (lambda v: _whole(v, 0), "must be a whole number of at least 0"),
    "in_stream": (lambda v: isinstance(v, bool), "must be true or false"),
    "stream": (lambda v: isinstance(v, bool), "must be true or false"),
    "turn": (lambda v: _whole(v, 0), "must be a whole number of at least 0"),
    "api": (lambda v: v in _api_names(), lambda: f"must be one of {', '.join(_api_names())}"),
    **dict.fromkeys(
        ("type", "code", "message", "model"),
        (lambda v: isinstance(v, str) and bool(v), "must be a non-empty string"),
    ),
}
"""Checks of fault values (filters included), each with what to say when it fails; the
adapter names are listed when it fails, since registering an adapter adds one."""


def _api_names() -> list[str]:
    return [name for name, _ in adapters()]


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
