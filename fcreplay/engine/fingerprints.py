"""The fingerprint of one unit: each input its requests are built from, hashed on its own."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from sys import intern

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.canonical import canonical_hash
from fcreplay.engine.plan import Unit, unit_settings
from fcreplay.fingerprint import SHORT, Fingerprint, text_hash
from fcreplay.inputs.cases import Case
from fcreplay.inputs.suite import Suite
from fcreplay.inputs.tool_results import FakeExecutor
from fcreplay.neutral import RequestSettings

_RULES: list[tuple[FakeExecutor, str]] = []
"""The last executor's rules hash: every unit of a run shares one executor, whose rules
cost far more to hash than everything else in a unit's fingerprint."""


def unit_fingerprint(suite: Suite, unit: Unit, adapter: ClientAdapter) -> Fingerprint:
    """What this unit's requests are built from, as `Fingerprint` hashes."""
    # Turn 0 may carry the case's tool choice; every later turn is built alike.
    turns = (unit_settings(suite, unit, 0), unit_settings(suite, unit, 1))
    max_steps = 1 if unit.single_turn else suite.config.max_steps
    prompt = suite.system_prompt
    executor = suite.executor
    # Interned: every record carries its unit's fingerprint, and equal parts stay one
    # object in the records a worker sends (pickling keeps what is shared).
    return Fingerprint(
        contract=intern(suite.contract.contract_hash[:SHORT]),
        prompt=None if prompt is None else _prompt_hash(prompt),
        prompt_version=suite.config.prompt_version,
        settings=_settings_hash(unit.target.model, turns, max_steps),
        adapter=intern(f"{adapter.NAME} {adapter.VERSION}"),
        case=_case_hash(unit.case),
        tool_results=None if executor is None else _rules_hash(executor),
    )


_SETTINGS: dict[tuple[str, int, int, int], tuple[tuple[RequestSettings, ...], str]] = {}
"""Settings hashes by the ids of the settings objects they hash (held, so the ids are not
reused): a run has few distinct settings, each one object for many units (`unit_settings`);
equal settings in other objects hash again, to the same digest."""


def _settings_hash(model: str, turns: tuple[RequestSettings, RequestSettings], steps: int) -> str:
    key = (model, id(turns[0]), id(turns[1]), steps)
    known = _SETTINGS.get(key)
    if known is not None and known[0][0] is turns[0] and known[0][1] is turns[1]:
        return known[1]
    if len(_SETTINGS) >= 1024:
        _SETTINGS.clear()
    digest = intern(_hash([model, [_plain(t) for t in turns], steps]))
    _SETTINGS[key] = (turns, digest)
    return digest


_CASES: dict[int, tuple[Case, str]] = {}
"""Case hashes by the id of their case (held, so the id is not reused): every case is
the case of one unit per target and variant."""


def _case_hash(case: Case) -> str:
    known = _CASES.get(id(case))
    if known is not None and known[0] is case:
        return known[1]
    digest = intern(_hash([[[m.role, m.content] for m in case.messages], _plain(case.tool_choice)]))
    if len(_CASES) >= 65536:
        _CASES.clear()
    _CASES[id(case)] = (case, digest)
    return digest


_PROMPTS: list[tuple[str, str]] = []
"""The last system prompt's hash (a run has one prompt)."""


def _prompt_hash(prompt: str) -> str:
    for known, digest in _PROMPTS:
        if known is prompt:
            return digest
    digest = intern(text_hash(prompt))
    _PROMPTS[:] = [(prompt, digest)]
    return digest


def _rules_hash(executor: FakeExecutor) -> str:
    for known, digest in _RULES:
        if known is executor:
            return digest
    digest = _hash([_plain(rule) for rule in executor.rules])
    _RULES[:] = [(executor, digest)]
    return digest


def _plain(value: object) -> object:
    """What `dataclasses.asdict` makes of `value`, for hashing only: a dataclass as a dict
    of its fields, in order, each made so in turn; any other value as it is, not copied
    (canonical JSON reads the lists, tuples and dicts it holds, and writes them alike)."""
    kind = type(value)
    names = _FIELD_NAMES.get(kind, _UNSEEN)
    if names is _UNSEEN:
        names = None
        if is_dataclass(value) and not isinstance(value, type):
            names = tuple(f.name for f in fields(value))
        _FIELD_NAMES[kind] = names
    if names is None:
        return value
    return {name: _plain(getattr(value, name)) for name in names}


_UNSEEN: tuple[str, ...] = ()
_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}
"""Each type's field names (None: not a dataclass), looked up once per type."""


def _hash(value: object) -> str:
    return canonical_hash(value)[:SHORT]
