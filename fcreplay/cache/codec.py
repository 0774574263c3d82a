"""JSON forms of what the cache keeps of the serial tail, and their readers.

Every reader checks the shape it reads and raises `ShapeError` on anything else, so
damaged or foreign data is a cache miss, never a crash or a wrong type downstream.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from fcreplay.evidence import Evidence
from fcreplay.golden.diff import EntryDiff
from fcreplay.golden.store import GoldenEntry, SignatureCount
from fcreplay.metrics import Tally
from fcreplay.operation import AttemptCost, OperationTally
from fcreplay.schemadiff.result import SchemaDiffEntry, SchemaDiffResult
from fcreplay.structdiff import MISSING, Difference


class ShapeError(ValueError):
    """Stored data is not of the shape this fcreplay writes."""


def tally_json(tally: Tally) -> dict[str, Any]:
    data = dict(vars(tally))
    for name in _SETS:  # by kind, worked out once (a cold check writes one per unit)
        data[name] = sorted(data[name])
    return data


def tally_from(data: Any) -> Tally:
    data = shaped(data, dict)
    read = Tally(text(data["target"]), text(data["variant"]))
    values = vars(read)
    # By kind, worked out once (a cold check reads one tally per unit).
    for name in _SETS:
        values[name] = set(texts(data[name]))
    for name in _MAPS:
        values[name] = {text(k): list(texts(v)) for k, v in shaped(data[name], dict).items()}
    for name in _WHOLE:
        values[name] = whole(data[name])
    for name in _TEXTS:
        value = data[name]
        values[name] = None if value is None else text(value)
    return read


_KINDS = vars(Tally("", ""))
_SETS = tuple(name for name, value in _KINDS.items() if isinstance(value, set))
_MAPS = tuple(name for name, value in _KINDS.items() if isinstance(value, dict))
_WHOLE = tuple(name for name, value in _KINDS.items() if isinstance(value, int))
_TEXTS = tuple(
    name
    for name, value in _KINDS.items()
    if name not in {*_SETS, *_MAPS, *_WHOLE, "target", "variant"}
)


_COST_FIELDS = tuple(f.name for f in fields(AttemptCost))
_COMPLETED_FIRST = _COST_FIELDS[0] == "completed"
_NUMBERS = frozenset({int, float, type(None)})


def spent_json(spent: OperationTally) -> list[Any]:
    # Its fields in order (as `__init__` set them): `dataclasses.astuple` deep-copies.
    costs = [list(vars(cost).values()) for cost in spent.completed]
    return [spent.attempted, spent.errors, costs]


def spent_from(data: Any) -> OperationTally:
    attempted, errors, completed = shaped(data, list)
    costs = []
    for row in shaped(completed, list):
        if (
            _COMPLETED_FIRST
            and type(row) is list
            and len(row) == len(_COST_FIELDS)
            and type(row[0]) is bool
            and all(type(value) in _NUMBERS for value in row[1:])
        ):
            costs.append(AttemptCost(*row))  # the common case, checked by exact type
            continue
        values = dict(zip(_COST_FIELDS, shaped(row, list), strict=True))
        for name, value in values.items():
            if name == "completed" and not isinstance(value, bool):
                raise ShapeError("completed: not a boolean")
            if name != "completed" and not isinstance(value, int | float | None):
                raise ShapeError(f"{name}: not a number")
        costs.append(AttemptCost(**values))
    return OperationTally(whole(attempted), whole(errors), costs)


def entry_json(entry: GoldenEntry) -> list[Any]:
    """A compact form of a run's entry (no provenance: a run's entries have none)."""
    signatures = [[s.signature, s.count] for s in entry.signatures]
    verdicts = [list(pair) for pair in entry.verdicts]
    return [entry.verdict, verdicts, signatures, list(entry.findings)]


def entry_from(data: Any) -> GoldenEntry:
    verdict, verdicts, signatures, codes = shaped(data, list)
    return GoldenEntry(
        verdict=text(verdict),
        verdicts=tuple((text(name), whole(count)) for name, count in shaped(verdicts, list)),
        signatures=tuple(
            SignatureCount(shaped(signature, list, none=True), whole(count))
            for signature, count in shaped(signatures, list)
        ),
        findings=texts(codes),
    )


def evidence_from(data: Any) -> Evidence:
    return Evidence(**shaped(data, dict))


def diff_json(diff: EntryDiff) -> list[Any]:
    return [
        diff.target,
        diff.case_id,
        diff.variant,
        diff.kind,
        None if diff.golden is None else diff.golden.to_json(),
        None if diff.now is None else diff.now.to_json(),
        [change.to_json() for change in diff.changes],
        list(diff.causes),
        [item.to_json() for item in diff.evidence],
    ]


def diff_from(data: Any) -> EntryDiff:
    target, case_id, variant, kind, golden, now, changes, causes, evidence = shaped(data, list)
    return EntryDiff(
        text(target),
        text(case_id),
        text(variant),
        text(kind),
        None if golden is None else GoldenEntry.from_json(shaped(golden, dict)),
        None if now is None else GoldenEntry.from_json(shaped(now, dict)),
        tuple(Difference.from_json(shaped(c, dict)) for c in shaped(changes, list)),
        texts(causes),
        tuple(evidence_from(item) for item in shaped(evidence, list)),
    )


def schema_from(data: Any) -> SchemaDiffResult:
    """Read `SchemaDiffResult.to_json` output back."""
    data = shaped(data, dict)
    entries = tuple(
        SchemaDiffEntry(
            target=text(item["target"]),
            tool=None if item["tool"] is None else text(item["tool"]),
            pointer=text(item["pointer"]),
            kind=text(item["class"]),
            contract=MISSING if item.get("contract_missing") else item["contract"],
            sent=MISSING if item.get("sent_missing") else item["sent"],
            count=whole(item["count"]),
            example=text(item["example"]),
            documented=shaped(item["documented"], bool),
            status=text(item["status"]),
        )
        for item in shaped(data["entries"], list)
    )
    return SchemaDiffResult(
        entries=entries,
        requests=whole(data["requests"]),
        blocking=tuple(e for e in entries if e.status == "blocking"),
        allowed=texts(data["allowed"]),
        cassettes=whole(data["cassettes"]),
        declarations=whole(data["declarations"]),
        missing=texts(data["missing_cassettes"]),
        skipped=texts(data["skipped"]),
    )


def shaped(value: Any, kind: type, *, none: bool = False) -> Any:
    """`value`, when it is a `kind` (or None, with `none`)."""
    if value is None and none:
        return None
    if not isinstance(value, kind):
        raise ShapeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


# The readers' common case first, by exact type: a cold check reads tens of thousands.
def text(value: Any) -> str:
    if type(value) is str:
        return value
    return str(shaped(value, str))


def texts(value: Any) -> tuple[str, ...]:
    if type(value) is list and all(type(item) is str for item in value):
        return tuple(value)
    return tuple(text(item) for item in shaped(value, list))


def whole(value: Any) -> int:
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShapeError(f"expected a whole number, got {value!r}")
    return value
