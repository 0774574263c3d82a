"""Run-log lines: a record's JSON, with what its unit's and run's records repeat written once."""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.cassettes.redaction import may_hold_key
from fcreplay.record import SCHEMA_VERSION, AttemptRecord, messages_json

_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""How every line is written: `json.dumps` with these options, keys in `to_json` order."""
_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE: Any = (
    None
    if _C_ENCODER is None
    else _C_ENCODER(None, _LINE.default, encode_basestring, None, ":", ",", False, False, True)
)
"""What `_LINE.encode` runs (CPython's C encoder), when there is one."""

Written = tuple[str, bool]
"""A member's JSON text, and whether it holds the beginning of a key shape."""


def record_line(record: AttemptRecord) -> str:
    """The record as its run-log line, newline included."""
    return guarded_line(record)[0]


def guarded_line(record: AttemptRecord) -> Written:
    """The record's line, and False when no piece of it holds the beginning of a key shape
    (`redaction.may_hold_key`): then only a credential value could make a guard refuse it.

    The text is what `_LINE` makes of `record.to_json()`: JSON writes each member alike
    alone or within the whole. A member the unit's other attempts or the run's other
    units hold as the same object is written, and looked at, once.
    """
    if record.schema_version != SCHEMA_VERSION or record.test is not None:
        return _encode(record.to_json()) + "\n", True
    members = (
        record.run_id,
        record.target,
        record.adapter,
        record.model,
        record.request_settings,
        record.adapter_version,
        record.prompt_version,
        record.contract_hash,
        record.cases_version,
        record.fcreplay_version,
        record.expect,
        record.fingerprint,
        record.recorded_with,
        record.messages,
        record.tags,
    )
    known, template = _TEMPLATE[0]
    if len(known) != len(members) or not all(map(operator.is_, known, members)):
        template = _template(record)
        _TEMPLATE[0] = (members, template)  # one store: threads making lines see either
    head, settings, versions, ending, closing, unit_key = template
    fresh = [
        _scalar(record.model_reported),
        encode_basestring(record.variant),
        encode_basestring(record.case_id),
        _scalar(record.attempt),
        _scalar(record.elapsed_ms),
        _scalar(record.request_sha256),
        _scalar(record.cassette),
    ]
    outcome, outcome_key = _outcome(record.outcome_json())
    line = "".join(
        (
            head,
            fresh[0],
            ',"variant":',
            fresh[1],
            ',"case_id":',
            fresh[2],
            ',"attempt":',
            fresh[3],
            ',"elapsed_ms":',
            fresh[4],
            settings,
            fresh[5],
            versions,
            outcome[1:-1],
            ending,
            fresh[6],
            closing,
        )
    )
    # Every cut between the pieces has punctuation on one side (`may_hold_key`).
    return line, unit_key or outcome_key or may_hold_key(",".join(fresh))


_TEMPLATE: list[tuple[tuple[Any, ...], Any]] = [((), None)]
"""The members the latest record shares with its unit's other attempts (most often the
same objects), and what `_template` wrote of them."""


def _template(record: AttemptRecord) -> tuple[str, str, str, str, str, bool]:
    """The pieces of the record's line around its own members (`guarded_line`), and
    whether any holds the beginning of a key shape."""
    head, head_key = _HEAD(
        (record.run_id, record.target, record.adapter, record.model), record.schema_version
    )
    settings, settings_key = _SETTINGS(record.request_settings)
    versions, versions_key = _VERSIONS(
        (
            record.adapter_version,
            record.prompt_version,
            record.contract_hash,
            record.cases_version,
            record.fcreplay_version,
        )
    )
    expect, expect_key = _EXPECT(record.expect)
    fingerprint, fingerprint_key = _FINGERPRINTS(record.fingerprint)
    recorded_with, recorded_key = _FINGERPRINTS(record.recorded_with)
    messages, messages_key = _MESSAGES(record.messages)
    tags, tags_key = _TAGS(record.tags) if record.tags else ("", False)
    return (
        head,
        ',"request_settings":' + settings + ',"request_sha256":',
        versions + ',"expect":' + expect + ",",
        ',"fingerprint":' + fingerprint + ',"recorded_with":' + recorded_with + ',"cassette":',
        ',"messages":' + messages + (',"tags":' + tags if record.tags else "") + "}\n",
        head_key
        or settings_key
        or versions_key
        or expect_key
        or fingerprint_key
        or recorded_key
        or messages_key
        or tags_key,
    )


def _encode(value: Any) -> str:
    # The C encoder `_LINE.encode` makes, without the Python steps it takes each call
    # (the same text), made once and without the markers that catch a cycle: a record
    # holds none (it is made of JSON data), and one would still end in RecursionError.
    if _C_ENCODE is None:
        return _LINE.encode(value)
    return "".join(_C_ENCODE(value, 0))


def _outcome(value: dict[str, Any]) -> Written:
    # orjson writes what `_LINE` writes but for floats under 1e-4, in other digits
    # (0.00001, 1e-7; `_LINE`: 1e-05, 1e-07), and NaN and infinity, as null (no record
    # holds them: its numbers come from strict JSON, which refuses them). Bytes that may
    # hold such a float (rare) are written by `_LINE`. The tests are made on the text:
    # `in` on bytes raises and clears an exception for each (a bytes is no integer).
    fast = strictjson.exact_json(value)
    text = None if fast is None else fast.decode()
    if text is None or ("-" in text and "e-" in text) or "0.0000" in text:
        text = _encode(value)
    return text, may_hold_key(text)


def _scalar(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is int:
        return int.__repr__(value)
    return "null" if value is None else _encode(value)


class _Known:
    """The written form of members by the object that holds them (kept, so that its id is
    not reused while the entry lasts)."""

    def __init__(self, make: Callable[[Any], Any], limit: int = 4096) -> None:
        self._make = make
        self._limit = limit
        self._known: dict[int, tuple[Any, Written]] = {}

    def __call__(self, value: Any) -> Written:
        hit = self._known.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        text = _encode(self._make(value))
        made = (text, may_hold_key(text))
        if len(self._known) >= self._limit:
            self._known.clear()
        self._known[id(value)] = (value, made)
        return made


class _Last:
    """The written form of a group of members, kept for the latest objects (a run's
    records come in by unit, each target's together)."""

    def __init__(self, write: Callable[..., str]) -> None:
        self._write = write
        self._last: tuple[tuple[Any, ...], Written] = ((), ("", True))

    def __call__(self, values: tuple[Any, ...], *rest: Any) -> Written:
        known, made = self._last
        if len(known) == len(values) + len(rest) and all(map(operator.is_, known, values + rest)):
            return made
        text = self._write(*values, *rest)
        made = (text, may_hold_key(text))
        self._last = (values + rest, made)
        return made


def _head(run_id: str, target: str, adapter: str, model: str, version: int) -> str:
    opening = {
        "schema_version": version,
        "run_id": run_id,
        "target": target,
        "adapter": adapter,
        "model": model,
    }
    return _encode(opening)[:-1] + ',"model_reported":'


def _versions(
    adapter: str, prompt: str | None, contract: str, cases: str | None, fcreplay: str
) -> str:
    written = {
        "adapter_version": adapter,
        "prompt_version": prompt,
        "contract_hash": contract,
        "cases_version": cases,
        "fcreplay_version": fcreplay,
    }
    return "," + _encode(written)[1:-1]


_HEAD = _Last(_head)
_VERSIONS = _Last(_versions)
_SETTINGS = _Known(lambda settings: settings.to_json())
_EXPECT = _Known(lambda expect: expect.to_json())
_FINGERPRINTS = _Known(
    lambda fingerprint: None if fingerprint is None else fingerprint.to_json(), 16
)
"""Few: each unit has its own (recorded_with is mostly the same object)."""
_MESSAGES = _Known(messages_json)
_TAGS = _Known(list)
