"""Golden baselines: per target, case and variant, what the model decided across repetitions.

`golden/<target>.json` (versioned, sorted keys, byte-stable)::

    {"fcreplay_golden": 1, "target": "...",
     "entries": {"<case_id>": {"<variant>": {
        "verdict": "pass" | "fail" | "error",     fail if any repetition failed, else error
                                                  if any errored, else pass
        "verdicts": {"pass": 2, "fail": 1},
        "findings": ["argument_mismatch", ...],   codes seen in any repetition (no drift)
        "signatures": [{"signature": [kind, [names], "canonical args"] | null,
                        "count": 3,
                        "kind": ..., "calls": [{"name": ..., "arguments": ...}]}],
                                                  most frequent first; kind and calls are
                                                  the signature spelled out for reading
                                                  and for argument-level diffs
        "provenance": {"run_id", "recorded_at", "model", "model_reported",
                       "fcreplay_version", "reason"}}}}}

An entry is rewritten only when its content (everything but provenance) changes,
so updating from a run that changed nothing leaves the file byte-identical.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.atomic import finish_group
from fcreplay.canonical import canonical_json
from fcreplay.confine import confined
from fcreplay.errors import InputError
from fcreplay.leanjson import loads_lean
from fcreplay.metrics import signature_key
from fcreplay.names import SEGMENT, is_path_name
from fcreplay.record import AttemptRecord
from fcreplay.sources import json_problem, line_of, pointer, read_text
from fcreplay.version import __version__

GOLDEN_FORMAT = 1
EntryKey = tuple[str, str]
"""(case_id, variant)"""


@dataclass(frozen=True)
class SignatureCount:
    """One first-turn signature and how many repetitions gave it."""

    signature: list[Any] | None
    """[kind, [sorted call names], canonical arguments JSON]; None without a decision."""
    count: int

    @property
    def key(self) -> str:
        """Canonical form, for equality."""
        return canonical_json(self.signature)

    def decision(self) -> dict[str, Any]:
        """The signature spelled out: kind and calls with names and arguments."""
        if self.signature is None:
            return {"kind": None, "calls": []}
        kind, names, arguments = self.signature
        values = strictjson.loads(arguments)
        calls = [{"name": n, "arguments": a} for n, a in zip(names, values, strict=False)]
        return {"kind": kind, "calls": calls}

    def to_json(self) -> dict[str, Any]:
        """The JSON form, with the decision spelled out beside the signature."""
        return {"signature": self.signature, "count": self.count, **self.decision()}


@dataclass(frozen=True)
class Provenance:
    """Where an entry's content came from; it changes only with the content."""

    run_id: str
    recorded_at: str
    model: str | None
    model_reported: str | None
    fcreplay_version: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class GoldenEntry:
    """What one case and variant gave over its repetitions; equality ignores provenance."""

    verdict: str
    verdicts: tuple[tuple[str, int], ...]
    signatures: tuple[SignatureCount, ...]
    findings: tuple[str, ...]
    provenance: Provenance | None = field(default=None, compare=False)

    @property
    def consistent(self) -> bool:
        """Whether every repetition gave the same signature."""
        return len(self.signatures) <= 1

    def signature_keys(self) -> dict[str, int]:
        """Canonical signature -> count."""
        return {s.key: s.count for s in self.signatures}

    def summary(self) -> str:
        """A short reading for tables: verdict and the signatures with counts."""
        shown = []
        for item in self.signatures:
            decision = item.decision()
            calls = [f"{c['name']} {_short(c['arguments'])}" for c in decision["calls"]]
            shown.append(f"{', '.join(calls) or decision['kind'] or 'no decision'} ×{item.count}")
        return f"{self.verdict} · " + "; ".join(shown)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (provenance only when set)."""
        data: dict[str, Any] = {
            "verdict": self.verdict,
            "verdicts": dict(self.verdicts),
            "signatures": [s.to_json() for s in self.signatures],
            "findings": list(self.findings),
        }
        if self.provenance is not None:
            data["provenance"] = self.provenance.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GoldenEntry:
        """Read an entry; `kind` and `calls` are derived from the signature, not read."""
        provenance = data.get("provenance")
        findings = data["findings"]
        # Lists, not generators, and each value's usual type tested here before the
        # function that words its error: a golden file is read entry by entry, thousands.
        return cls(
            verdict=_verdict(data["verdict"]),
            verdicts=_verdicts(data["verdicts"]),
            signatures=tuple(
                [
                    SignatureCount(
                        _signature(s["signature"]),
                        n if type(n := s["count"]) is int and n >= 1 else _count(n),
                    )
                    for s in data["signatures"]
                ]
            ),
            findings=tuple(findings)
            if type(findings) is list and all(type(code) is str for code in findings)
            else tuple([_code(code) for code in findings]),
            provenance=_provenance(provenance) if provenance else None,
        )


def _verdicts(value: Any) -> tuple[tuple[str, int], ...]:
    pairs = [(_verdict(k), v if type(v) is int and v >= 1 else _count(v)) for k, v in value.items()]
    return tuple(sorted(pairs))


def _provenance(value: Any) -> Provenance:
    """`Provenance(**value)`, made once per distinct text-valued one (a golden file's
    entries mostly share the update that wrote them)."""
    if type(value) is not dict or not all(type(v) is str or v is None for v in value.values()):
        return Provenance(**value)
    key = tuple(value.items())
    found = _PROVENANCES.get(key)
    if found is None:
        found = Provenance(**value)
        _PROVENANCES[key] = found  # a few per golden file, few files
    return found


_PROVENANCES: dict[tuple[tuple[str, str | None], ...], Provenance] = {}


def _signature(value: Any) -> list[Any] | None:
    # [kind, [names], canonical arguments]; the arguments text is parsed when shown.
    if value is None:
        return None
    if (
        type(value) is list
        and len(value) == 3
        and type(value[0]) is str
        and type(value[1]) is list
        and all(type(name) is str for name in value[1])
        and type(value[2]) is str
        and _arguments(value[2])
    ):
        return value  # the common case, by exact type
    if not (
        isinstance(value, list)
        and len(value) == 3
        and isinstance(value[0], str)
        and isinstance(value[1], list)
        and all(isinstance(name, str) for name in value[1])
        and isinstance(value[2], str)
        and _arguments(value[2])
    ):
        raise ValueError(f"signature {value!r} is not [kind, [names], arguments JSON]")
    return value


@functools.lru_cache(maxsize=1024)
def _arguments(text: str) -> bool:
    """Whether `text` is a JSON array (a golden file repeats few distinct ones)."""
    return isinstance(strictjson.loads(text), list)


def _verdict(value: Any) -> str:
    if type(value) is str and value in _VERDICTS:
        return value
    if value not in ("pass", "fail", "error"):
        raise ValueError(f"verdict {value!r} is not pass, fail or error")
    return str(value)


_VERDICTS = frozenset({"pass", "fail", "error"})


def _code(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"finding code {value!r} is not a string")
    return value


def _count(value: Any) -> int:
    if type(value) is int and value >= 1:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"count {value!r} is not a whole number of at least 1")
    return value


def _short(value: Any, limit: int = 48) -> str:
    text = canonical_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Observation:
    """The records of one target, grouped into entries, with what provenance needs."""

    target: str
    run_id: str | None = None
    model: str | None = None
    entries: dict[EntryKey, GoldenEntry] = field(default_factory=dict)
    models_reported: dict[EntryKey, str | None] = field(default_factory=dict)


def observe(records: Iterable[AttemptRecord]) -> dict[str, Observation]:
    """Group attempt records into golden entries per target (no provenance yet)."""
    grouped: dict[str, dict[EntryKey, list[AttemptRecord]]] = {}
    for record in records:
        key = (record.case_id, record.variant)
        grouped.setdefault(record.target, {}).setdefault(key, []).append(record)
    observed: dict[str, Observation] = {}
    for target, groups in grouped.items():
        first = next(iter(groups.values()))[0]
        seen = Observation(target, first.run_id, first.model)
        for key, group in groups.items():
            seen.entries[key] = entry_of(group)
            seen.models_reported[key] = next(
                (r.model_reported for r in group if r.model_reported), None
            )
        observed[target] = seen
    return observed


_NO_DECISION = canonical_json(None)


def entry_of(records: Sequence[AttemptRecord]) -> GoldenEntry:
    """The entry of one case and variant from the records of its repetitions."""
    # Plain dicts, one pass: a check makes one entry per unit it replays.
    verdicts: dict[str, int] = {}
    counts: dict[str, int] = {}
    signatures: dict[str, list[Any] | None] = {}
    codes: set[str] = set()
    for record in records:
        verdicts[record.verdict] = verdicts.get(record.verdict, 0) + 1
        key = _NO_DECISION if record.signature is None else signature_key(record.signature)
        if key in counts:
            counts[key] += 1
        else:
            counts[key] = 1
            signature = None if record.signature is None else list(record.signature)
            if signature is not None:
                # The golden file keeps the JSON form: the call names as a list.
                signature[1] = list(signature[1])
            signatures[key] = signature
        if record.findings:
            codes.update(f.code for f in record.findings if f.code != "request_drift")
    verdict = "fail" if "fail" in verdicts else ("error" if "error" in verdicts else "pass")
    ordered = sorted(counts, key=lambda k: (-counts[k], k))
    return GoldenEntry(
        verdict=verdict,
        verdicts=tuple(sorted(verdicts.items())),
        signatures=tuple(SignatureCount(signatures[k], counts[k]) for k in ordered),
        findings=tuple(sorted(codes)),
    )


@dataclass
class GoldenFile:
    """The golden baseline of one target."""

    target: str
    entries: dict[EntryKey, GoldenEntry] = field(default_factory=dict)

    def to_text(self) -> str:
        """Stable JSON text: sorted keys, two-space indent, one trailing newline."""
        nested: dict[str, dict[str, Any]] = {}
        for (case_id, variant), entry in self.entries.items():
            nested.setdefault(case_id, {})[variant] = entry.to_json()
        document = {"fcreplay_golden": GOLDEN_FORMAT, "target": self.target, "entries": nested}
        return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def golden_path(folder: Path, target: str) -> Path:
    """golden/<target>.json; a target that is not a valid name (`../x`, `/abs`) is an
    InputError, so no golden file is ever read or written outside the folder."""
    if not is_path_name(target, 2):
        raise InputError.at(
            folder,
            None,
            f"target {target!r} is not a safe name ({SEGMENT.pattern}, at most one '/'); "
            "the run log or golden file naming it was edited or damaged",
        )
    return confined(folder / f"{target}.json", folder)


def load_golden(folder: Path, target: str) -> GoldenFile | None:
    """The golden file of `target`, or None when there is none yet."""
    path = golden_path(folder, target)
    finish_group(folder)  # an update killed after its commit point is finished first
    if not path.exists():
        return None
    text = read_text(path)
    try:
        # At a peak of about the value's size: a check's fold reads one golden file per
        # target while the workers replay.
        document = loads_lean(text)
    except json.JSONDecodeError as exc:
        raise InputError.at(path, exc.lineno, json_problem(exc)) from None
    version = document.get("fcreplay_golden") if isinstance(document, dict) else None
    if version != GOLDEN_FORMAT:
        raise InputError.at(
            path,
            None,
            f"golden format {version!r}, this fcreplay reads {GOLDEN_FORMAT}; recreate it with "
            "`fcreplay golden update --reason ...`",
        )
    golden = GoldenFile(target)
    where = "entries"
    try:
        for case_id, variants in document["entries"].items():
            for variant, entry in variants.items():
                where = f"entry {case_id}/{variant}"
                golden.entries[(str(case_id), str(variant))] = GoldenEntry.from_json(entry)
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as exc:
        detail = f"missing key {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise InputError.at(
            path,
            line_of(text, pointer("entries", *where.split(" ", 1)[-1].split("/", 1)))
            if where != "entries"
            else None,
            f"malformed golden {where}: {detail}; restore the file from version control or "
            "recreate it with `fcreplay golden update --reason ...`",
        ) from None
    return golden


def golden_entries(
    records: Iterable[AttemptRecord], *, reason: str, recorded_at: str
) -> dict[str, dict[EntryKey, GoldenEntry]]:
    """The entries a run gives, per target and sorted by case and variant, each with the
    provenance `golden update` writes: what the update sets, and what `fcreplay diff`
    compares a second run with."""
    built: dict[str, dict[EntryKey, GoldenEntry]] = {}
    for target, seen in observe(records).items():
        built[target] = {}
        for key, entry in sorted(seen.entries.items()):
            provenance = Provenance(
                run_id=seen.run_id or "",
                recorded_at=recorded_at,
                model=seen.model,
                model_reported=seen.models_reported.get(key),
                fcreplay_version=__version__,
                reason=reason,
            )
            built[target][key] = GoldenEntry(
                entry.verdict, entry.verdicts, entry.signatures, entry.findings, provenance
            )
    return built
