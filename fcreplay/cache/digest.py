"""What one unit's records give check's serial tail, as JSON: a unit's digest.

The report's tallies, the golden entry, the staleness and the evidence of a run are
made unit by unit from the same functions the record-reading paths use
(`metrics.tally`, `operation.operation_tallies`, `golden.store.entry_of`,
`stale.staleness`, `evidence.first_evidence`); `fold` adds the digests up in plan
order. A digest read back is checked for shape: a damaged one is a cache miss.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.cache.codec import (
    ShapeError,
    entry_from,
    entry_json,
    evidence_from,
    shaped,
    spent_from,
    spent_json,
    tally_from,
    tally_json,
    text,
    texts,
    whole,
)
from fcreplay.evidence import Evidence, first_evidence
from fcreplay.golden.store import GoldenEntry, entry_of
from fcreplay.inputs.prices import Price
from fcreplay.metrics import Tally
from fcreplay.operation import AttemptCost, OperationTally, attempt_cost
from fcreplay.quickinit import quick
from fcreplay.record import AttemptRecord
from fcreplay.render.report import SHARED
from fcreplay.stale import StaleUnit, causes_of, describe


@quick
@dataclass(frozen=True)
class Digest:
    """One unit's share of the serial tail."""

    attempts: int
    problems: int
    """Attempts that drifted or found no recording (their records are read back when shown)."""
    unsafe: int
    tally: Tally
    spent: OperationTally
    shared: Mapping[str, tuple[str, ...]]
    """Per report SHARED field, the distinct values of the unit's records."""
    entry: GoldenEntry
    causes: tuple[str, ...]
    """Why the unit's recording is stale (golden diff's `causes`); empty when it is not."""
    stale: StaleUnit | None
    described: tuple[str, ...]
    """Each of the stale unit's causes in words (for the staleness counts)."""
    evidence: Mapping[str, Evidence]
    """Per finding code of the entry, the evidence of its first finding."""


def digest_of(records: Sequence[AttemptRecord], prices: Mapping[str, Price]) -> Digest:
    """The digest of one unit's records (every attempt, in attempt order).

    What `metrics.tally`, `operation.operation_tallies` and `stale.staleness` give for
    one unit, in one pass over its records (a worker makes one per unit it replays)."""
    first = records[0]
    target, variant = first.target, first.variant
    counts = Tally(target, variant)
    spent = OperationTally()
    problems = unsafe = 0
    causes: dict[str, None] = {}
    members: list[AttemptRecord] = []
    stale_at: AttemptRecord | None = None  # its first stale attempt says why
    for record in records:
        if record.target != target or record.variant != variant:
            raise ValueError("the records of more than one unit")
        counts.add(record)
        spent.attempted += 1
        cost = attempt_cost(record, prices.get(record.model))
        if cost.completed:
            spent.completed.append(cost)
        elif record.transport_error is not None:
            spent.errors += 1
        findings = record.findings
        drifted = False
        if findings:  # most records have none: no scan of them
            codes = [f.code for f in findings]
            drifted = "request_drift" in codes
            unsafe += "unsafe_call" in codes
        missed = record.replay_miss
        problems += drifted or missed
        found = causes_of(record) if drifted or missed else None
        if found is not None:
            members.append(record)
            causes.update(dict.fromkeys(found))
            stale_at = stale_at or record
    entry = entry_of(records)
    stale = (
        None
        if stale_at is None
        else StaleUnit(target, variant, stale_at.case_id, tuple(causes), stale_at.problem or "")
    )
    return Digest(
        attempts=len(records),
        problems=problems,
        unsafe=unsafe,
        tally=counts,
        spent=spent,
        shared=_shared(records),
        entry=entry,
        causes=tuple(causes),
        stale=stale,
        described=() if stale is None else tuple(describe(c, members) for c in stale.causes),
        evidence={e.code: e for e in first_evidence(records, list(entry.findings))}
        if entry.findings
        else {},
    )


def _shared(records: Sequence[AttemptRecord]) -> dict[str, tuple[str, ...]]:
    """Per SHARED field, the sorted distinct values of the records but None."""
    rows = set(map(_SHARED_OF, records))
    if len(rows) == 1:  # the common case: a unit's attempts share them all
        (row,) = rows
        return {name: () if v is None else (v,) for name, v in zip(SHARED, row, strict=True)}
    return {
        name: tuple(sorted({v for r in records if (v := getattr(r, name)) is not None}))
        for name in SHARED
    }


_SHARED_OF = operator.attrgetter(*SHARED)  # a tuple: SHARED names several fields


def digest_json(digest: Digest) -> dict[str, Any]:
    """The JSON form (`digest_from` reads it)."""
    stale = digest.stale
    return {
        "attempts": digest.attempts,
        "problems": digest.problems,
        "unsafe": digest.unsafe,
        "tally": tally_json(digest.tally),
        "spent": spent_json(digest.spent),
        "shared": {name: list(values) for name, values in digest.shared.items()},
        "entry": entry_json(digest.entry),
        "causes": list(digest.causes),
        "stale": None if stale is None else [list(stale.causes), stale.problem],
        "described": list(digest.described),
        "evidence": {code: e.to_json() for code, e in digest.evidence.items()},
    }


def digest_bytes(digest: Digest) -> bytes:
    """The JSON form as compact UTF-8 bytes, as a pack stores it."""
    data = digest_json(digest)
    # orjson, several times faster, where it writes the same values (it writes a
    # non-finite number as null): numbers are only in the costs, and in what the
    # evidence of findings expected and got.
    if all(_finite(cost) for cost in digest.spent.completed) and all(
        _finite_value(e.expected) and _finite_value(e.actual) for e in digest.evidence.values()
    ):
        fast = strictjson.exact_json(data)
        if fast is not None:
            return fast
    return _COMPACT.encode(data).encode()


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _finite(cost: AttemptCost) -> bool:
    return all(type(v) is not float or math.isfinite(v) for v in vars(cost).values())


def _finite_value(value: Any) -> bool:
    """Whether `value` is JSON data without NaN or infinity; False for anything else
    (`exact_json` may write such a value otherwise than the standard encoder)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        return all(map(_finite_value, value.values()))
    if kind is list or kind is tuple:
        return all(map(_finite_value, value))
    return False


def digest_from(data: Any, unit: tuple[str, str, str]) -> Digest:
    """Read a digest of the unit (target, variant, case_id); ShapeError when damaged."""
    try:
        return _read(shaped(data, dict), unit)
    except ShapeError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ShapeError(f"digest of the wrong shape ({exc})") from None


def _read(data: dict[str, Any], unit: tuple[str, str, str]) -> Digest:
    target, variant, case_id = unit
    stale = data["stale"]
    counts = tally_from(data["tally"])
    if (counts.target, counts.variant) != (target, variant):
        raise ShapeError("the digest of another unit")
    return Digest(
        attempts=whole(data["attempts"]),
        problems=whole(data["problems"]),
        unsafe=whole(data["unsafe"]),
        tally=counts,
        spent=spent_from(data["spent"]),
        shared={name: texts(data["shared"][name]) for name in SHARED},
        entry=entry_from(data["entry"]),
        causes=texts(data["causes"]),
        stale=None
        if stale is None
        else StaleUnit(target, variant, case_id, texts(stale[0]), text(stale[1])),
        described=texts(data["described"]),
        evidence={
            text(code): evidence_from(item) for code, item in shaped(data["evidence"], dict).items()
        },
    )
