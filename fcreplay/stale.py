"""Stale recordings: units whose cassettes no longer match what the suite sends, and why.

A replay that drifts (or finds no recording) did not test the model: the recording is
out of date. Which input changed comes from the fingerprints the records carry (the
cassette's against the run's); a cassette older than fingerprints is read from the
labels of its drift. The record commands re-record exactly the stale units.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from fcreplay.record import AttemptRecord
from fcreplay.runmarks import RunScope

UnitKey = tuple[str, str, str]
"""(target, variant, case_id)"""

NO_RECORDING = "no recording"
UNKNOWN = "request"
"""The cause when the cassette does not say what it was recorded from."""

_LABEL_CAUSES = (
    ("system prompt", "prompt"),
    ("user message", "case"),
    ("system message", "case"),
    ("tool result", "tool results"),
    ("tool description", "contract"),
    ("parameters of tool", "contract"),
    ("tool order", "contract"),
    ("tool list", "contract"),
)
"""Drift labels (see `engine.drift`) and the input they point at."""


def causes_of(record: AttemptRecord) -> tuple[str, ...] | None:
    """Why this attempt's recording is stale; None when it is not."""
    if record.replay_miss:
        return (NO_RECORDING,)
    drift = record.drift
    if drift is None:
        return None
    if record.fingerprint is not None and record.recorded_with is not None:
        # Same inputs, yet another request: the cassette's own answers were changed
        # (edited by hand), which is a result to review, not an out-of-date recording.
        return record.fingerprint.changed_since(record.recorded_with) or None
    found = dict.fromkeys(
        cause
        for change in drift.changes or ()
        for prefix, cause in _LABEL_CAUSES
        if (change.label or "").startswith(prefix)
    )
    return tuple(found) or (UNKNOWN,)


def describe(cause: str, records: Iterable[AttemptRecord] = ()) -> str:
    """A cause in words; for the prompt, whether `prompt_version` moved with it."""
    if cause == "prompt":
        versions = {
            (r.recorded_with.prompt_version, r.fingerprint.prompt_version)
            for r in records
            if r.recorded_with is not None and r.fingerprint is not None
        }
        if len(versions) == 1:
            (before, after), *_ = versions
            if before == after:
                return f"the system prompt changed since recording (prompt_version {after} did not)"
            return f"the system prompt changed since recording (prompt_version {before} → {after})"
        return "the system prompt changed since recording"
    return _WORDS.get(cause, f"the {cause} changed since recording")


_WORDS = {
    "contract": "the tool contract changed since recording",
    "settings": "the model or request settings changed since recording",
    "adapter": "the adapter changed what it sends since recording",
    "case": "the case's messages changed since recording",
    "tool results": "the tool results changed since recording",
    NO_RECORDING: "there is no recording",
    UNKNOWN: "the request changed since recording (the cassette predates fingerprints)",
}


@dataclass(frozen=True)
class StaleUnit:
    """One unit whose recording is out of date."""

    target: str
    variant: str
    case_id: str
    causes: tuple[str, ...]
    problem: str
    """The first attempt's problem line (drift or missing recording)."""

    @property
    def key(self) -> UnitKey:
        """(target, variant, case_id)"""
        return (self.target, self.variant, self.case_id)


@dataclass(frozen=True)
class Staleness:
    """The stale units of a run, their causes and the commands that re-record them."""

    units: tuple[StaleUnit, ...]
    causes: tuple[tuple[str, int], ...]
    """Each cause in words, with how many units it explains, most frequent first."""
    commands: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.units)

    def headline(self) -> str:
        """One line: how many units, why, and the command."""
        count = len(self.units)
        noun = "unit" if count == 1 else "units"
        why = "; ".join(text if n == count else f"{text} ({n})" for text, n in self.causes)
        return (
            f"stale: {count} {noun}, {why}; "
            f"re-record {'it' if count == 1 else 'them'} with: " + " && ".join(self.commands)
        )

    def keys(self) -> set[UnitKey]:
        """The stale units' keys."""
        return {unit.key for unit in self.units}


def staleness(records: Iterable[AttemptRecord], scope: RunScope | None = None) -> Staleness:
    """The stale units among a run's records (in record order), with their commands."""
    records = list(records)
    ran: set[UnitKey] = set()
    units: dict[UnitKey, StaleUnit] = {}
    members: dict[UnitKey, list[AttemptRecord]] = {}
    for record in records:
        key = (record.target, record.variant, record.case_id)
        ran.add(key)
        causes = causes_of(record)
        if causes is None:
            continue
        members.setdefault(key, []).append(record)
        known = units.get(key)
        if known is None:
            units[key] = StaleUnit(*key, causes, record.problem or "")
        else:
            merged = tuple(dict.fromkeys(known.causes + causes))
            units[key] = StaleUnit(*key, merged, known.problem)
    counted: Counter[str] = Counter()
    for key, unit in units.items():
        for cause in unit.causes:
            counted[describe(cause, members[key])] += 1
    commands = record_commands(set(units), ran, scope or RunScope())
    return Staleness(
        tuple(units.values()), tuple(counted.most_common()), tuple(commands) if units else ()
    )


Cover = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def record_commands(stale: set[UnitKey], ran: set[UnitKey], scope: RunScope) -> list[str]:
    """`fcreplay record` commands that together re-record exactly `stale`, as few as the
    selections allow (they cross targets × variants × cases)."""
    if not stale:
        return []
    everything = tuple(tuple(sorted({k[i] for k in ran})) for i in range(3))
    selected: Cover = (scope.targets, scope.variants, scope.case_ids)
    if scope.shard is not None:
        # A shard ran part of every selection: leaving one out would re-record other shards'.
        selected = (everything[0], everything[1], everything[2])
    return [_command(cover, everything, selected) for cover in _covers(stale, ran)]


def _covers(stale: set[UnitKey], ran: set[UnitKey]) -> list[Cover]:
    dims = tuple(tuple(sorted({k[i] for k in stale})) for i in range(3))
    reached = {k for k in ran if all(k[i] in dims[i] for i in range(3))}
    if reached == stale:
        return [(dims[0], dims[1], dims[2])]
    axis = next(i for i in range(3) if len(dims[i]) > 1)
    found: list[Cover] = []
    for value in dims[axis]:
        found += _covers({k for k in stale if k[axis] == value}, ran)
    return found


_OPTIONS = ("--target", "--variant", "--case")


def _command(cover: Cover, everything: tuple[tuple[str, ...], ...], selected: Cover) -> str:
    words = ["fcreplay record"]
    for option, values, every, chosen in zip(_OPTIONS, cover, everything, selected, strict=True):
        # A selection can be left out only when the run itself was not narrowed there.
        if values == every and not chosen:
            continue
        words += [f"{option} {value}" for value in values]
    return " ".join(words)
