"""A unit's digest holds what the record readers give for its records, in one pass."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cache.digest import Digest, digest_bytes, digest_from, digest_json, digest_of
from fcreplay.cache.fold import fold_json, part_of, target_fold
from fcreplay.cache.planned import dumps
from fcreplay.evidence import Evidence, first_evidence
from fcreplay.golden.store import entry_of
from fcreplay.inputs.prices import Price
from fcreplay.metrics import tally
from fcreplay.operation import AttemptCost, OperationTally, operation_tallies
from fcreplay.record import AttemptRecord
from fcreplay.render.report import SHARED
from fcreplay.runmarks import RunScope
from fcreplay.stale import UnitKey, causes_of, describe, staleness

from .recorded_suite import edit_argument, recorded_copy, replay

PRICES = {"sim-careful": Price(input_per_mtok=1.5, output_per_mtok=6.0)}
Units = dict[tuple[str, str, str], list[AttemptRecord]]


@pytest.fixture(params=["as recorded", "prompt edited"])
def replayed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> tuple[Path, Units]:
    """The records of each unit of a replay with findings, a missing cassette and, edited
    prompt, every other unit drifted."""
    suite = recorded_copy(tmp_path_factory, tmp_path)
    edit_argument(suite / "cassettes" / "careful" / "auto" / "lookup.json", "order_id", "X-1")
    (suite / "cassettes" / "hasty" / "reversed" / "lookup.json").unlink()
    if request.param == "prompt edited":
        prompt = suite / "contracts" / "delivery_prompt.txt"
        prompt.write_text(prompt.read_text(encoding="utf-8") + "\nBe brief.\n", encoding="utf-8")
    grouped: dict[tuple[str, str, str], list[AttemptRecord]] = {}
    for record in replay(suite).records:
        grouped.setdefault((record.target, record.variant, record.case_id), []).append(record)
    return suite, grouped


def test_a_digest_is_what_the_record_readers_give(replayed: tuple[Path, Units]) -> None:
    suite, units = replayed
    assert any(causes_of(r) for records in units.values() for r in records)
    for records in units.values():
        digest = digest_of(records, PRICES)
        ((_, counts),) = tally(records).items()
        ((_, spent),) = operation_tallies(records, PRICES).items()
        found = staleness(records)
        entry = entry_of(records)
        assert vars(digest.tally) == vars(counts)
        assert digest.spent == spent
        assert digest.entry == entry
        assert digest.stale == (found.units[0] if found.units else None)
        assert digest.causes == (found.units[0].causes if found.units else ())
        members = [r for r in records if causes_of(r) is not None]
        causes = digest.stale.causes if digest.stale else ()
        assert digest.described == tuple(describe(c, members) for c in causes)
        evidence = first_evidence(records, list(entry.findings))
        assert digest.evidence == {e.code: e for e in evidence}
        assert digest.attempts == len(records)
        assert digest.problems == sum(r.drift is not None or r.replay_miss for r in records)
        assert digest.unsafe == sum(
            any(f.code == "unsafe_call" for f in r.findings) for r in records
        )
        assert digest.shared == {
            name: tuple(sorted({getattr(r, name) for r in records} - {None})) for name in SHARED
        }
    # What a worker adds up folds as the digests' JSON forms, read back, do.
    for target in {key[0] for key in units}:
        mine = [(key, digest_of(r, PRICES)) for key, r in units.items() if key[0] == target]
        read = [(key, digest_from(json.loads(digest_bytes(d)), key)) for key, d in mine]
        assert _folded(suite, target, mine) == _folded(suite, target, read)


def test_a_digest_is_written_as_the_standard_encoder_reads_it(
    replayed: tuple[Path, Units],
) -> None:
    """orjson writes numbers its own way and a non-finite one as null: the bytes may
    differ from the standard encoder's, the values read back may not."""
    _, units = replayed
    for records in units.values():
        digest = digest_of(records, PRICES)
        assert json.loads(digest_bytes(digest)) == json.loads(dumps(digest_json(digest)))
    digest = digest_of(next(iter(units.values())), PRICES)
    spent = AttemptCost(True, 10, 5, 5, 1e-05, 1, math.inf)  # type: ignore[arg-type]
    odd = replace(digest, spent=OperationTally(1, 0, [spent]))
    assert json.loads(digest_bytes(odd))["spent"][2][0][-1] == math.inf
    assert json.loads(digest_bytes(odd)) == json.loads(dumps(digest_json(odd)))


def test_the_shared_values_are_each_fields_distinct_values_but_none(
    replayed: tuple[Path, Units],
) -> None:
    # One row of values for every record (the common case) or several, None left out.
    _, units = replayed
    records = next(r for r in units.values() if len(r) >= 2)
    first, *rest = records
    for changed in (
        [replace(first, prompt_version=None)],
        [replace(first, prompt_version="v9", cases_version=None)],
        [first, replace(first, contract_hash="0" * 64, prompt_version=None)],
        [replace(first, prompt_version=None, cases_version=None)],
    ):
        mixed = [*changed, *rest]
        assert digest_of(mixed, PRICES).shared == {
            name: tuple(sorted({getattr(r, name) for r in mixed} - {None})) for name in SHARED
        }


def test_evidence_holding_a_non_finite_number_is_written_by_the_standard_encoder(
    replayed: tuple[Path, Units],
) -> None:
    _, units = replayed
    digest = digest_of(next(iter(units.values())), PRICES)
    code = "argument_mismatch"
    first = Evidence(
        target="t",
        variant="auto",
        case_id="c",
        attempt=1,
        step=0,
        code=code,
        message="m",
        expected=None,
        actual=None,
        excerpt=None,
        phrase=None,
        arguments=None,
        cassette=None,
    )
    for odd in (math.inf, [1.5, {"x": -math.inf}], (math.inf,)):
        for field in ("expected", "actual"):
            evidence = {code: replace(first, **{field: odd})}
            made = json.loads(digest_bytes(replace(digest, evidence=evidence)))
            assert made["evidence"][code][field] == json.loads(json.dumps(odd))
    fine = {code: replace(first, expected={"a": [1, 2.5, True, None, "x"]}, actual=(3,))}
    made = replace(digest, evidence=fine)
    assert json.loads(digest_bytes(made)) == json.loads(dumps(digest_json(made)))


def _folded(suite: Path, target: str, digests: list[tuple[UnitKey, Digest]]) -> Any:
    made = target_fold(target, [part_of(target, digests)], suite / "golden", RunScope())
    return json.loads(dumps(fold_json(made)))
