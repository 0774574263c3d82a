"""Which entries of a run a golden baseline must not be taken from, and why."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fcreplay.record import AttemptRecord
from fcreplay.stale import causes_of


def refusals(
    records: Iterable[AttemptRecord],
    *,
    targets: Sequence[str] = (),
    case_ids: Sequence[str] = (),
    allow_errors: bool = False,
) -> list[tuple[str, str]]:
    """The selected entries a baseline must not be taken from, as (target/variant/case,
    why): an attempt whose recording is stale always; one that errored or got no
    decision unless `allow_errors`."""
    found: dict[str, str] = {}
    for record in records:
        if (targets and record.target not in targets) or (
            case_ids and record.case_id not in case_ids
        ):
            continue
        why = None
        if causes_of(record) is not None:
            why = "its recording is stale: " + (record.problem or "request drift")
        elif not allow_errors and record.transport_error is not None:
            why = f"attempt {record.attempt} got no answer: {record.transport_error.message}"
        elif not allow_errors and record.signature is None:
            why = f"attempt {record.attempt} has no decision"
        if why is not None:
            found.setdefault(record.unit, why)
    return list(found.items())
