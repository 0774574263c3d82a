"""The schema diff's result: folded entries, counts and their JSON form."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fcreplay.adapters.protocol import ReadBackAdapter
from fcreplay.canonical import canonical_json
from fcreplay.inputs.contract import Contract, ToolSpec
from fcreplay.neutral import RequestView
from fcreplay.schemadiff.classes import CLASSES, SchemaChange, difference_key
from fcreplay.schemadiff.tool_settings import StepSettings, declaration_differences
from fcreplay.strictjson import exact_json
from fcreplay.structdiff import MISSING


@dataclass(frozen=True)
class SchemaDiffEntry:
    """One folded line: identical drifts of one target across requests."""

    target: str
    tool: str | None
    pointer: str
    kind: str
    contract: Any
    sent: Any
    count: int
    """How many requests carried this difference."""
    example: str
    """One cassette that holds such a request."""
    documented: bool
    status: str
    """"lossless", "allowed" or "blocking"."""

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON; a missing value is null plus a `*_missing` flag."""
        return {
            "target": self.target,
            "tool": self.tool,
            "pointer": self.pointer,
            "class": self.kind,
            "status": self.status,
            "contract": None if self.contract is MISSING else self.contract,
            "sent": None if self.sent is MISSING else self.sent,
            **({"contract_missing": True} if self.contract is MISSING else {}),
            **({"sent_missing": True} if self.sent is MISSING else {}),
            "count": self.count,
            "example": self.example,
            "documented": self.documented,
        }


@dataclass(frozen=True)
class SchemaDiffResult:
    """What `schema_diff` found; `blocking` entries make `fcreplay schema-diff` exit 1."""

    entries: tuple[SchemaDiffEntry, ...]
    requests: int
    """Recorded requests read and compared."""
    blocking: tuple[SchemaDiffEntry, ...]
    """Entries whose class is neither lossless nor allowed."""
    allowed: tuple[str, ...] = ()
    """Classes allowed by the caller and the suite's `schema_diff_allow`."""
    cassettes: int = 0
    declarations: int = 0
    """Distinct tool declarations (per adapter and strict flag) actually diffed."""
    missing: tuple[str, ...] = ()
    """Planned cassettes not on disk (replay reports them as failures)."""
    skipped: tuple[str, ...] = ()
    """Interactions or cassettes that could not be compared, and why."""

    @property
    def ok(self) -> bool:
        """True when nothing blocks."""
        return not self.blocking

    def to_json(self) -> dict[str, Any]:
        """A stable JSON object: counts, then every entry in report order."""
        return {
            "schema_diff": 1,
            "ok": self.ok,
            "requests": self.requests,
            "cassettes": self.cassettes,
            "declarations": self.declarations,
            "allowed": list(self.allowed),
            "blocking": len(self.blocking),
            "entries": [entry.to_json() for entry in self.entries],
            "missing_cassettes": list(self.missing),
            "skipped": list(self.skipped),
        }


@dataclass(frozen=True)
class SeenRequests:
    """Requests a differ counts as one: what their step should send, their fingerprint,
    the first one's body and URI, the cassette it is in, and how many there were."""

    expected: StepSettings
    fingerprint: bytes
    body: dict[str, Any]
    uri: str
    example: str
    count: int


@dataclass(frozen=True)
class Collected:
    """What a differ collected before diffing: one cassette's share, kept by check's cache
    and added back to another differ with `SchemaDiffer.absorb`."""

    seen: tuple[SeenRequests, ...]
    requests: int
    cassettes: int
    missing: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()


class Folder:
    """Folds identical changes of one target across requests, counting the requests."""

    def __init__(self) -> None:
        self._keys: dict[int, tuple[SchemaChange, tuple[Any, ...]]] = {}
        """A change's key, once per change (one declaration's are met by many requests);
        the change is kept with it, so its id is not reused while the folder lives."""
        self._slots: dict[tuple[Any, ...], list[Any]] = {}

    def add(self, target: str, change: SchemaChange, count: int, example: str) -> None:
        """Count `change`, met in `count` requests like the one in `example`."""
        known = self._keys.get(id(change))
        if known is None:
            key = (
                change.tool,
                change.pointer,
                change.kind,
                difference_key(change.contract),
                difference_key(change.sent),
                change.documented,
            )
            known = self._keys[id(change)] = (change, key)
        fold_key = (target, *known[1])
        slot = self._slots.get(fold_key)
        if slot is None:
            self._slots[fold_key] = [change, count, example]
        else:
            slot[1] += count

    def entries(
        self, order: Mapping[str, int], status: Callable[[str], str]
    ) -> list[SchemaDiffEntry]:
        """The folded entries, in the targets' `order`, then by tool, pointer and class."""
        made = []
        for key, (change, count, example) in self._slots.items():
            entry = SchemaDiffEntry(
                target=key[0],
                tool=change.tool,
                pointer=change.pointer,
                kind=change.kind,
                contract=change.contract,
                sent=change.sent,
                count=count,
                example=example,
                documented=change.documented,
                status=status(change.kind),
            )
            target, tool, pointer, kind, contract, sent, _ = key
            place = (order.get(target, len(order)), target, tool or "", pointer)
            made.append((entry, (*place, CLASSES.index(kind), contract, sent)))
        made.sort(key=lambda item: item[1])
        return [entry for entry, _ in made]


DeclarationKey = tuple[str, bool, tuple[str, ...], str]
"""Adapter, strict flag, the tools the step should send, the sent tools' canonical JSON."""


class ReadBack:
    """Each distinct request read back and its declaration diffed, once; one of them can
    be kept across `SchemaDiffer.result` calls of one suite's differs (check reads the
    requests back as the replay brings their shares in, not after it)."""

    def __init__(self, contract: Contract) -> None:
        self._contract = contract
        self._read: dict[tuple[str, bytes], tuple[list[ToolSpec], str, RequestView]] = {}
        self._canonical: dict[bytes, str] = {}
        self._declarations: dict[DeclarationKey, list[SchemaChange]] = {}

    def of(
        self,
        adapter: ReadBackAdapter,
        expected: StepSettings,
        fingerprint: bytes,
        body: dict[str, Any],
        uri: str,
    ) -> tuple[DeclarationKey, list[SchemaChange], RequestView]:
        """The request's declaration, its differences from what `expected` says the step
        should declare, and the request as its adapter reads it."""
        # Requests of one fingerprint read back alike, whatever their step should send;
        # equal exact bytes of the declared tools make equal canonical JSON.
        known = self._read.get((expected.adapter, fingerprint))
        if known is None:
            specs = adapter.sent_tools(body)
            declared = [spec.to_json() for spec in specs]
            exact = exact_json(declared)
            sent_key = self._canonical.get(exact) if exact is not None else None
            if sent_key is None:
                sent_key = canonical_json(declared)
                if exact is not None:
                    self._canonical[exact] = sent_key
            view = adapter.read_request(body, uri)
            known = self._read[(expected.adapter, fingerprint)] = (specs, sent_key, view)
        specs, sent_key, view = known
        key = (expected.adapter, expected.strict, expected.tools, sent_key)
        changes = self._declarations.get(key)
        if changes is None:
            changes = self._declarations[key] = declaration_differences(
                self._contract, adapter, expected.strict, expected.tools, specs
            )
        return key, changes, view
