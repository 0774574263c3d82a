"""Simulator answers from the suite's own cases, in named deterministic profiles.

`fcreplay simulate --from-cases` turns every case into a scripted case: the request
is recognised by the case's last user message, and each profile answers it:

* `expected`: what the case expects. Calls with the expected arguments (the first
  `any_of` alternative, the first BFCL answer, an example value from the schema for
  `present`, `regex` or unspelled arguments; an optional argument without a value is
  left out); text containing the first `contains_any` phrase; after tool results,
  the `then` answer the same way (or "Done.").
* `numbers-as-strings`: the first number in the expected arguments sent as a string.
* `extra-property`: one argument the schema does not declare added.
* `wrong-tool`: another tool of the case's tools called instead of the expected one.
* `eager-call`: where the case expects no call, a call anyway (its first write tool,
  else its first tool, with example arguments).
* `false-success`: after tool results, the first `must_not_contain` phrase of `then`.
* `sloppy`: every case misbehaves in one of those ways: `eager-call` where no call is
  expected; otherwise, in turn over the cases expecting calls, `numbers-as-strings`,
  `extra-property` and `wrong-tool`, each where it applies; plus `false-success`
  wherever `then` forbids a phrase.

A profile answers as `expected` wherever its misbehaviour does not apply. The request's
model id picks the profile: `fcreplay-sim-<name>` or `<name>`; any other model gets
the default profile. A script, when given, wins case by case: a case it scripts keeps
its scripted profiles, and the generated ones answer only the models it does not name.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fcreplay.inputs.cases import Case, Expectation, ExpectedCall
from fcreplay.inputs.contract import Contract
from fcreplay.inputs.suite import Suite
from fcreplay.simulator.examples import example, set_at, subschema
from fcreplay.simulator.script import (
    ANY_MODEL,
    FALLBACK_TEXT,
    Answer,
    Profile,
    Script,
    ScriptCase,
    ScriptedCall,
)

PROFILES = (
    "expected",
    "sloppy",
    "numbers-as-strings",
    "extra-property",
    "wrong-tool",
    "eager-call",
    "false-success",
)
MODEL_PREFIX = "fcreplay-sim-"
"""A model id `fcreplay-sim-<profile>` asks for that profile."""
_MISBEHAVIOURS = PROFILES[2:]
_ROTATION = ("numbers-as-strings", "extra-property", "wrong-tool")
_DONE = "Done."
_ASK = "Could you tell me a little more about what you need?"
_EXTRA_NAMES = ("comment", "note", "extra_info", "fcreplay_extra")


@dataclass(frozen=True)
class Gap:
    """A case the configured script does not answer, and why."""

    case_id: str
    reason: str


def script_from_cases(
    suite: Suite, script: Script | None = None, default: str = "expected"
) -> Script:
    """The Script that answers every case of `suite`, `script` winning case by case."""
    if default not in PROFILES:
        raise ValueError(f"unknown profile {default!r} (known: {', '.join(PROFILES)})")
    scripted = {case.id: case for case in script.cases} if script is not None else {}
    expecting = [case.id for case in suite.cases if case.expect.kind == "tool_call"]
    built: list[ScriptCase] = []
    for case in suite.cases:
        turn = expecting.index(case.id) if case.id in expecting else 0
        profiles = _profiles(case, suite.contract.restricted(case.tools), turn, default)
        mine = scripted.pop(case.id, None)
        if mine is None:
            declared = frozenset(suite.contract.restricted(case.tools).names)
            built.append(ScriptCase(case.id, last_user_text(case), profiles, tools=declared))
        else:
            built.append(ScriptCase(mine.id, mine.user, {**profiles, **mine.profiles}, mine.faults))
    built += scripted.values()  # scripted cases the suite does not have still answer
    source = f"cases {suite.config.cases}" + (f" + script {script.source}" if script else "")
    return Script(
        tuple(built),
        script.faults if script is not None else (),
        script.fallback_text if script is not None else FALLBACK_TEXT,
        source,
    )


def uncovered(script: Script, suite: Suite) -> list[Gap]:
    """Cases of `suite` that `script` alone cannot answer for its configured targets."""
    gaps: list[Gap] = []
    for case in suite.cases:
        found = script.case_for(last_user_text(case))
        if found is None:
            gaps.append(Gap(case.id, "no scripted case has its last user message"))
            continue
        models = sorted({t.model for t in suite.config.targets if found.profile(t.model) is None})
        if models:
            gaps.append(Gap(case.id, f"no profile for model {', '.join(models)}"))
    return gaps


def last_user_text(case: Case) -> str:
    """The message the simulator recognises a case's requests by."""
    return next(m.content for m in reversed(case.messages) if m.role == "user")


def _profiles(case: Case, contract: Contract, turn: int, default: str) -> dict[str, Profile]:
    made = {name: _profile(case, contract, _plan(name, case, contract, turn)) for name in PROFILES}
    keyed = {f"{MODEL_PREFIX}{name}": profile for name, profile in made.items()}
    return {**keyed, **made, ANY_MODEL: made[default]}


def _plan(name: str, case: Case, contract: Contract, turn: int) -> set[str]:
    """The misbehaviours a profile applies to this case (those that fit it)."""
    fits = [m for m in _MISBEHAVIOURS if _applies(m, case, contract)]
    if name == "sloppy":
        chosen = {"eager-call", "false-success"} & set(fits)
        rotation = [m for m in _ROTATION if m in fits]
        if case.expect.kind == "tool_call" and rotation:
            chosen.add(rotation[turn % len(rotation)])
        return chosen
    return {name} & set(fits)


def _applies(misbehaviour: str, case: Case, contract: Contract) -> bool:
    expect = case.expect
    calls = expect.kind == "tool_call"
    if misbehaviour == "eager-call":
        return not calls and bool(contract.tools)
    if misbehaviour == "false-success":
        return case.then is not None and bool(case.then.must_not_contain) and calls
    if misbehaviour == "wrong-tool":
        return calls and bool(set(contract.names) - set(expect.tools))
    if misbehaviour == "numbers-as-strings":
        return calls and any(_first_number(_arguments(c, contract)) for c in expect.calls)
    return calls  # extra-property


def _profile(case: Case, contract: Contract, faults: set[str]) -> Profile:
    expect = case.expect
    if expect.kind == "tool_call":
        calls = [ScriptedCall(call.tool, _arguments(call, contract)) for call in expect.calls]
        calls = _misbehave(calls, faults, contract, expect)
        then = case.then
        if "false-success" in faults and then is not None:
            after = Answer(text=then.must_not_contain[0])
        else:
            after = _answer(then, _DONE) if then is not None else Answer(text=_DONE)
        return Profile(((Answer(calls=tuple(calls)),), (after,)))
    if "eager-call" in faults:
        tool = next((t for t in contract.tools if t.effect == "write"), contract.tools[0])
        eager = Answer(calls=(ScriptedCall(tool.name, example(tool.parameters)),))
        return Profile(
            ((eager,), (_answer(case.then, _DONE) if case.then else Answer(text=_DONE),))
        )
    return Profile(((_answer(expect, _ASK),),))


def _misbehave(
    calls: list[ScriptedCall], faults: set[str], contract: Contract, expect: Expectation
) -> list[ScriptedCall]:
    first = calls[0]
    arguments = copy.deepcopy(first.arguments or {})
    if "wrong-tool" in faults:
        other = next(t for t in contract.tools if t.name not in expect.tools)
        return [ScriptedCall(other.name, example(other.parameters)), *calls[1:]]
    if "numbers-as-strings" in faults:
        index = next(i for i, c in enumerate(calls) if _first_number(c.arguments or {}))
        arguments = copy.deepcopy(calls[index].arguments or {})
        where, value = _first_number(arguments) or ("", 0)
        set_at(arguments, where, str(value))
        return [*calls[:index], ScriptedCall(calls[index].name, arguments), *calls[index + 1 :]]
    if "extra-property" in faults:
        declared = subschema(contract.by_name[first.name].parameters, "").get("properties", {})
        extra = next(n for n in _EXTRA_NAMES if n not in declared and n not in arguments)
        arguments[extra] = "added by the model"
        return [ScriptedCall(first.name, arguments), *calls[1:]]
    return calls


def _arguments(call: ExpectedCall, contract: Contract) -> dict[str, Any]:
    """The arguments the expected profile sends for one expected call."""
    spec = contract.by_name[call.tool]
    if call.arguments is None:
        found = example(spec.parameters)
        return found if isinstance(found, dict) else {}
    if call.rules == "bfcl":
        properties = spec.parameters.get("properties", {})
        # An undeclared parameter fails BFCL's check whatever its value: leave it out.
        return {
            name: _bfcl_value(answers[0], properties.get(name, {}))
            for name, answers in call.arguments.items()
            if answers and not _omitted(answers[0]) and name in properties
        }
    arguments = copy.deepcopy(call.arguments)
    for matcher in call.matchers:
        if matcher.any_of is not None:
            set_at(arguments, matcher.pointer, copy.deepcopy(matcher.any_of[0]))
        elif matcher.present or matcher.regex is not None:
            set_at(arguments, matcher.pointer, example(subschema(spec.parameters, matcher.pointer)))
    return arguments


def _bfcl_value(answer: Any, schema: Any) -> Any:
    """A value from BFCL's first answer: its dict answers hold per-key answer lists."""
    kinds = schema.get("type") if isinstance(schema, dict) else None
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "object" in kinds and isinstance(answer, dict):
        return _bfcl_dict(answer)
    items = schema.get("items") if isinstance(schema, dict) else None
    if "array" in kinds and isinstance(items, dict) and items.get("type") == "object":
        return [_bfcl_dict(d) if isinstance(d, dict) else d for d in answer]
    return copy.deepcopy(answer)


def _bfcl_dict(answer: dict[str, Any]) -> dict[str, Any]:
    return {
        key: copy.deepcopy(values[0])
        for key, values in answer.items()
        if isinstance(values, list) and values and not _omitted(values[0])
    }


def _omitted(answer: Any) -> bool:
    return isinstance(answer, str) and answer == ""


def _answer(expectation: Expectation, neutral: str) -> Answer:
    phrase = expectation.contains_any[0] if expectation.contains_any else neutral
    if expectation.kind == "refusal":
        return Answer(refusal=phrase)
    return Answer(text=phrase)


def _first_number(value: Any, at: str = "") -> tuple[str, int | float] | None:
    """The pointer and value of the first number (keys in sorted order), if any."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return at, value
    items: Sequence[tuple[str, Any]] = ()
    if isinstance(value, dict):
        items = [(f"{at}/{_escape(k)}", value[k]) for k in sorted(value)]
    elif isinstance(value, list):
        items = [(f"{at}/{i}", v) for i, v in enumerate(value)]
    for where, item in items:
        found = _first_number(item, where)
        if found is not None:
            return found
    return None


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
