"""The fingerprint of one unit: each input its requests are built from, hashed on its own."""

from __future__ import annotations

from dataclasses import asdict
from sys import intern

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.canonical import canonical_hash
from fcreplay.engine.plan import Unit, unit_settings
from fcreplay.fingerprint import SHORT, Fingerprint, text_hash
from fcreplay.inputs.suite import Suite
from fcreplay.inputs.tool_results import FakeExecutor

_RULES: list[tuple[FakeExecutor, str]] = []
"""The last executor's rules hash: every unit of a run shares one executor, whose rules
cost far more to hash than everything else in a unit's fingerprint."""


def unit_fingerprint(suite: Suite, unit: Unit, adapter: ClientAdapter) -> Fingerprint:
    """What this unit's requests are built from, as `Fingerprint` hashes."""
    # Turn 0 may carry the case's tool choice; every later turn is built alike.
    settings = [asdict(unit_settings(suite, unit, step)) for step in (0, 1)]
    max_steps = 1 if unit.single_turn else suite.config.max_steps
    prompt = suite.system_prompt
    executor = suite.executor
    case, choice = unit.case, unit.case.tool_choice
    # Interned: every record carries its unit's fingerprint, and equal parts stay one
    # object in the records a worker sends (pickling keeps what is shared).
    return Fingerprint(
        contract=intern(suite.contract.contract_hash[:SHORT]),
        prompt=None if prompt is None else intern(text_hash(prompt)),
        prompt_version=suite.config.prompt_version,
        settings=intern(_hash([unit.target.model, settings, max_steps])),
        adapter=intern(f"{adapter.NAME} {adapter.VERSION}"),
        case=intern(_hash([[[m.role, m.content] for m in case.messages], asdict(choice)])),
        tool_results=None if executor is None else _rules_hash(executor),
    )


def _rules_hash(executor: FakeExecutor) -> str:
    for known, digest in _RULES:
        if known is executor:
            return digest
    digest = _hash([asdict(rule) for rule in executor.rules])
    _RULES[:] = [(executor, digest)]
    return digest


def _hash(value: object) -> str:
    return canonical_hash(value)[:SHORT]
