"""Run-log lines written in pieces: the bytes `json.dumps` gives, and the guard still reads them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fcreplay.cassettes.redaction import SecretGuard
from fcreplay.errors import SecretLeakError
from fcreplay.fingerprint import Fingerprint
from fcreplay.neutral import Message
from fcreplay.record import AttemptRecord, SentSettings
from fcreplay.runline import guarded_line
from fcreplay.runlog import RunLogWriter, record_line

from .records import make_record

KEY = "sk-" + "A1b2C3d4" * 3
"""Shaped like an OpenAI key."""
FINGERPRINT = Fingerprint("c" * 16, "p" * 16, "v1", "s" * 16, "openai_chat 3", "k" * 16, None)


def dumped(record: AttemptRecord) -> str:
    return json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"


def unit_record() -> AttemptRecord:
    return replace(
        make_record(schema_version=2, model_reported="mé", request_sha256="ab"),
        fingerprint=FINGERPRINT,
        recorded_with=FINGERPRINT,
        cassette="cassettes/t/auto/c.json",
        messages=(Message("user", "Où est ma commande ?"),),
        tags=("lookup",),
    )


def variations(base: AttemptRecord) -> list[AttemptRecord]:
    """Records that share all but one member with `base`, or differ only in types."""
    settings = base.request_settings
    return [
        base,
        replace(base, attempt=2, elapsed_ms=7, verdict="fail", model_reported=None),
        replace(base, request_settings=replace(settings, temperature=0)),  # 0, not 0.0
        replace(base, request_settings=replace(settings, temperature=0.0)),
        replace(base, recorded_with=None, cassette=None),
        replace(base, recorded_with=replace(FINGERPRINT, prompt=None)),
        replace(base, messages=(), tags=()),
        replace(base, messages=(Message("user", 'a "quoted"\nline'),)),
        replace(base, test="tests/test_x.py::test_y"),
        replace(base, schema_version=1),
        replace(base, run_id="other", target="u", contract_hash="h2", cases_version="c2"),
        base,
    ]


def test_every_line_is_the_bytes_json_dumps_gives() -> None:
    for record in variations(unit_record()):
        assert record_line(record) == dumped(record)
        assert guarded_line(record)[0] == dumped(record)


@pytest.mark.parametrize(
    "leaky",
    [
        lambda r: replace(r, messages=(Message("user", f"my key is {KEY}"),)),
        lambda r: replace(r, model_reported=KEY),
        lambda r: replace(r, cassette=f"cassettes/{KEY}.json"),
        lambda r: replace(r, tags=(KEY,)),
        lambda r: replace(r, expect=replace(r.expect, tools=(KEY,))),
        lambda r: replace(r, request_settings=replace(r.request_settings, forced_tool=KEY)),
        lambda r: replace(r, fingerprint=replace(FINGERPRINT, prompt_version=KEY)),
        lambda r: replace(r, run_id=KEY),
        lambda r: replace(r, cases_version=KEY),
    ],
)
def test_a_key_in_any_member_is_refused_the_first_time_and_every_time(
    tmp_path: Path, leaky: object
) -> None:
    assert callable(leaky)
    writer = RunLogWriter(tmp_path / "run.jsonl", guard=SecretGuard())
    clean = unit_record()
    leak = leaky(clean)
    assert writer.checked_line(clean) == dumped(clean)
    for _ in range(2):  # its pieces written before, and then known
        assert guarded_line(leak)[1]
        with pytest.raises(SecretLeakError):
            writer.checked_line(leak)
    writer.close()


def test_a_credential_value_is_refused_though_no_key_shape_is_there(tmp_path: Path) -> None:
    value = "hunter2-but-longer"
    record = replace(unit_record(), messages=(Message("user", f"password {value}"),))
    assert guarded_line(record)[1] is False
    writer = RunLogWriter(tmp_path / "run.jsonl", guard=SecretGuard([value]))
    with pytest.raises(SecretLeakError):
        writer.checked_line(record)
    writer.close()


def test_settings_equal_under_eq_but_written_apart_are_not_confused() -> None:
    base = unit_record()
    one = replace(base, request_settings=SentSettings("auto", None, True, False, 0, 1, False, 4))
    two = replace(one, request_settings=SentSettings("auto", None, 1, False, 0.0, 1, False, 4))
    assert one.request_settings == two.request_settings
    assert record_line(one) != record_line(two)
    assert (record_line(one), record_line(two)) == (dumped(one), dumped(two))


NUMBERS = [0.0, -0.0, 0.1, 2.5, 1e-4, 1e-5, -1e-5, 7.5e-6, 1e-7, 5e-324, 1e15, 1e16, 1e22, 1.5e300]
"""Floats either side of where orjson's digits and `json.dumps`'s part (under 1e-4)."""


@pytest.mark.parametrize("number", [*NUMBERS, 1, 2**64, -(2**63) - 1, True])
def test_the_numbers_in_an_attempts_outcome_are_written_as_json_dumps_writes_them(
    number: object,
) -> None:
    finding = {
        "code": "argument_mismatch",
        "path": "/calls/0/arguments/weight_kg",
        "expected": {"weight_kg": number, "note": "in \u00e9\x01 \u2028"},
        "actual": [number, [number], "de-DE 0.00001"],
        "message": "weighs otherwise",
    }
    record = replace(unit_record(), findings=(make_record(findings=[finding]).findings[0],))
    assert guarded_line(record)[0] == dumped(record)
    assert guarded_line(record)[1] is False


def test_a_key_in_an_attempts_outcome_is_refused(tmp_path: Path) -> None:
    finding = {"code": "x", "path": "/", "expected": 1, "actual": KEY, "message": "m"}
    record = replace(unit_record(), findings=(make_record(findings=[finding]).findings[0],))
    assert guarded_line(record) == (dumped(record), True)
    writer = RunLogWriter(tmp_path / "run.jsonl", guard=SecretGuard())
    with pytest.raises(SecretLeakError):
        writer.checked_line(record)
    writer.close()
