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

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fcreplay.atomic import write_text_atomically
from fcreplay.canonical import canonical_json
from fcreplay.errors import InputError
from fcreplay.record import AttemptRecord
from fcreplay.sources import load_json
from fcreplay.stale import causes_of
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
        values = json.loads(arguments)
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
        return cls(
            verdict=data["verdict"],
            verdicts=tuple(sorted((str(k), int(v)) for k, v in data["verdicts"].items())),
            signatures=tuple(
                SignatureCount(s["signature"], int(s["count"])) for s in data["signatures"]
            ),
            findings=tuple(data["findings"]),
            provenance=Provenance(**provenance) if provenance else None,
        )


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


def entry_of(records: Sequence[AttemptRecord]) -> GoldenEntry:
    """The entry of one case and variant from the records of its repetitions."""
    verdicts = Counter(r.verdict for r in records)
    verdict = "fail" if verdicts["fail"] else ("error" if verdicts["error"] else "pass")
    counts: Counter[str] = Counter()
    signatures: dict[str, list[Any] | None] = {}
    for record in records:
        signature = None if record.signature is None else list(record.signature)
        if signature is not None:
            # The golden file keeps the JSON form: the call names as a list.
            signature[1] = list(signature[1])
        key = canonical_json(signature)
        counts[key] += 1
        signatures.setdefault(key, signature)
    ordered = sorted(counts, key=lambda k: (-counts[k], k))
    codes = {f.code for r in records for f in r.findings if f.code != "request_drift"}
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
    """golden/<target>.json"""
    return folder / f"{target}.json"


def load_golden(folder: Path, target: str) -> GoldenFile | None:
    """The golden file of `target`, or None when there is none yet."""
    path = golden_path(folder, target)
    if not path.exists():
        return None
    document, _ = load_json(path)
    version = document.get("fcreplay_golden") if isinstance(document, dict) else None
    if version != GOLDEN_FORMAT:
        raise InputError.at(
            path,
            None,
            f"golden format {version!r}, this fcreplay reads {GOLDEN_FORMAT}; recreate it with "
            "`fcreplay golden update --reason ...`",
        )
    golden = GoldenFile(document.get("target", target))
    try:
        for case_id, variants in document["entries"].items():
            for variant, entry in variants.items():
                golden.entries[(case_id, variant)] = GoldenEntry.from_json(entry)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise InputError.at(path, None, f"malformed golden entry ({exc!r})") from None
    return golden


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


@dataclass(frozen=True)
class UpdateResult:
    """What `update_golden` did to one target's file."""

    target: str
    path: Path
    updated: tuple[EntryKey, ...]
    unchanged: int
    removed: tuple[EntryKey, ...] = ()

    @property
    def written(self) -> bool:
        """Whether the file changed."""
        return bool(self.updated or self.removed)


def update_golden(
    folder: Path,
    records: Iterable[AttemptRecord],
    *,
    reason: str,
    targets: Sequence[str] = (),
    case_ids: Sequence[str] = (),
    prune: bool = False,
    now: datetime | None = None,
    in_scope: Callable[[EntryKey], bool] = lambda key: True,
) -> list[UpdateResult]:
    """Set the selected entries from a run's records; only changed entries get new provenance.

    `prune` also deletes the selected targets' entries (of the selected cases, and
    within what the run was asked to run: `in_scope`) that the run has no attempt for.
    """
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    results = []
    for target, entries in golden_entries(records, reason=reason, recorded_at=stamp).items():
        if targets and target not in targets:
            continue
        golden = load_golden(folder, target) or GoldenFile(target)
        updated, unchanged = [], 0
        for key, entry in entries.items():
            if case_ids and key[0] not in case_ids:
                continue
            if golden.entries.get(key) == entry:
                unchanged += 1
                continue
            golden.entries[key] = entry
            updated.append(key)
        removed = [
            key
            for key in sorted(golden.entries)
            if prune
            and key not in entries
            and (not case_ids or key[0] in case_ids)
            and in_scope(key)
        ]
        for key in removed:
            del golden.entries[key]
        path = golden_path(folder, target)
        result = UpdateResult(target, path, tuple(updated), unchanged, tuple(removed))
        if result.written:
            folder.mkdir(parents=True, exist_ok=True)
            write_text_atomically(path, golden.to_text())
        results.append(result)
    return results
