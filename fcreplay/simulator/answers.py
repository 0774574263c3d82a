"""Choosing the simulator's answer to a request from the script, and the Decision it renders.

Rules applied to the scripted answer of the request's repetition (`simulator` counts
repetitions):

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
* Invalid arguments (`raw_arguments`): a format whose calls carry arguments as text
  (`Capabilities.string_arguments`) gets it verbatim. A format that carries JSON
  objects cannot send broken JSON, so the simulator sends the nearest real failure
  its adapter declares (`Capabilities.broken_call_stop`): "malformed_call" ends the
  turn as a malformed call without the call, "length" cuts the call off at the
  output-token limit (the partial input kept). Each parses as kind "invalid".
* Usage (`synthetic_usage`): a quarter of the request's bytes as input tokens, a
  quarter of the answer's characters as output tokens. Made up, like every answer
  here, but stable, so reports of a synthetic suite show the figures' shape.
"""

from __future__ import annotations

import re

from fcreplay.adapters.capabilities import Capabilities
from fcreplay.canonical import canonical_json
from fcreplay.decision import Decision, DecisionKind, ToolCall, Usage
from fcreplay.neutral import RequestView
from fcreplay.simulator.script import Answer, Choice, Profile, ScriptedCall

CALL_TAG = re.compile(rb"fcsim_r(\d+)_t\d+_\d+")
"""The repetition number in the call ids `to_decision` issues, as it reads in a request."""


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


def synthetic_usage(request: bytes, decision: Decision) -> Usage:
    """Made-up but stable token counts for one answer (see the module docstring)."""
    answered = (decision.text or "") + "".join(
        call.name + canonical_json(call.arguments if call.arguments is not None else {})
        for call in decision.calls
    )
    return Usage(input_tokens=max(1, len(request) // 4), output_tokens=max(1, len(answered) // 4))


def to_decision(
    answer: Answer, capabilities: Capabilities, model: str | None, repetition: int, turn: int
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
    if capabilities.string_arguments:
        return Decision(kind=kind, text=answer.text, calls=calls, stop="tool_call", model=model)
    stop = capabilities.broken_call_stop
    if stop == "malformed_call":
        return Decision(kind=kind, text=answer.text, stop=stop, model=model)
    return Decision(kind=kind, text=answer.text, calls=calls, stop=stop, model=model)
