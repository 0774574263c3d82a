"""Schema diff: the tool declarations recorded requests sent, against the canonical contract.

Every recorded request is read back with its adapter (`sent_tools`, `read_request`)
and compared with what its unit should have sent (`plan.unit_tools`,
`plan.unit_settings`). Each difference gets one class:

- `lossless`, `constraint_lost`, `semantic_change`, `description_changed`: a
  declared tool's description and schema, keyword by keyword
  (`schemadiff.classes` has the rules);
- `tool_missing`, `tool_extra`, `order_changed`: the declared tools against the
  list (and order) the variant sends;
- `tool_choice_mismatch`, `parallel_mismatch`: the request's tool choice and
  parallel policy against the unit's settings for that step. A policy the wire
  format cannot carry (its adapter's `Capabilities.parallel_knob`) is not a
  mismatch when the request leaves it out; `fcreplay lint` reports the limitation.

An entry is `documented` when the adapter's own `wire_schema` transform makes
the same change (a strict transform that moves constraints into the
description, for instance); that explains a difference but does not excuse it.

Reading requests back takes an adapter's read-back part (`ReadBackAdapter`); the
cassettes of an adapter without it are skipped, each with a note naming it.

Requests repeat the same declaration thousands of times, so each request costs
one fingerprint and one dictionary lookup; each distinct declaration is diffed
once (through `structdiff`, the only deepdiff user) and its differences counted.

This module collects and folds; `tool_settings` holds the request-wide classes and
`result` the result and its JSON, their public names re-exported here. The text,
JSON and Markdown output is `fcreplay.render.schemadiff`'s.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard, cast

from fcreplay.adapters.protocol import ClientAdapter, ReadBackAdapter
from fcreplay.adapters.registry import get_adapter
from fcreplay.engine.plan import Unit, plan_units, unit_settings, unit_tools
from fcreplay.inputs.suite import Suite
from fcreplay.schemadiff.classes import ALLOWABLE
from fcreplay.schemadiff.result import Collected, DeclarationKey, Folder, ReadBack, SeenRequests
from fcreplay.schemadiff.result import SchemaDiffEntry as SchemaDiffEntry
from fcreplay.schemadiff.result import SchemaDiffResult as SchemaDiffResult
from fcreplay.schemadiff.tool_settings import StepSettings, setting_differences
from fcreplay.schemadiff.tool_settings import declaration_differences as declaration_differences
from fcreplay.strictjson import exact_parts

if TYPE_CHECKING:
    from fcreplay.cassettes.interactions import Interaction
    from fcreplay.cassettes.store import Cassette, UnreadableInteraction
    from fcreplay.neutral import RequestSettings


def schema_diff(
    suite: Suite,
    *,
    targets: Sequence[str] = (),
    cassettes: Path | None = None,
    allow: Iterable[str] = (),
    loaded: Iterable[Cassette] | None = None,
) -> SchemaDiffResult:
    """Diff every recorded request of the planned units against the contract.

    Reads `cassettes` (default: the suite's folder), or the already-loaded
    `loaded` cassettes (matched to units by their fcreplay block). `allow` adds
    to the suite's `schema_diff_allow`. Raises InputError for an unknown target
    or an unreadable cassette file, ValueError for an unknown class in `allow`.
    """
    from fcreplay.cassettes.store import load_cassette

    differ = SchemaDiffer(suite, allow=allow)
    units = plan_units(suite, targets=targets)
    if loaded is not None:
        by_key = {(u.target.name, u.variant, u.case.id): u for u in units}
        for cassette in loaded:
            meta = cassette.meta
            unit = by_key.get((meta.target, meta.variant, meta.case_id)) if meta else None
            if unit is None:
                differ.skip(f"{cassette.path}: not the cassette of a planned target/variant/case")
            else:
                differ.add(cassette, unit)
        return differ.result()
    folder = cassettes or suite.config.cassettes
    for unit in units:
        path = unit.cassette_path(folder)
        if path.is_file():
            differ.add(load_cassette(path, suite.config.limits), unit)
        else:
            differ.missing.append(str(path))
    return differ.result()


def allowed_classes(allow: Iterable[str], suite: Suite) -> tuple[str, ...]:
    """The union of `allow` and the suite's `schema_diff_allow`, in CLASSES order."""
    chosen = set(allow) | set(suite.config.schema_diff_allow)
    unknown = sorted(chosen - set(ALLOWABLE) - {"lossless"})
    if unknown:
        raise ValueError(f"unknown class {unknown[0]!r} (known: {', '.join(ALLOWABLE)})")
    return tuple(kind for kind in ALLOWABLE if kind in chosen)


@dataclass
class _Seen:
    """The first request of one fingerprint, and how often it recurred."""

    body: dict[str, Any]
    uri: str
    example: str
    count: int = 1


class SchemaDiffer:
    """Collects recorded requests cassette by cassette; `result()` diffs and folds them."""

    def __init__(
        self, suite: Suite, *, allow: Iterable[str] = (), allowed: tuple[str, ...] | None = None
    ) -> None:
        """`allowed`: the classes `allowed_classes` made already (a replay makes a fresh
        differ for every cassette), else made from `allow` and the suite's."""
        self.suite = suite
        self.allowed = allowed_classes(allow, suite) if allowed is None else allowed
        self.missing: list[str] = []
        """Planned cassettes not found on disk."""
        self._skipped: list[str] = []
        self._seen: dict[tuple[StepSettings, bytes], _Seen] = {}
        self._expected: dict[tuple[Any, ...], tuple[RequestSettings, StepSettings]] = {}
        self._reducible: dict[str, bool] = {}
        self._digests: dict[tuple[bytes, ...], bytes] = {}
        self._requests = 0
        self._cassettes = 0

    def skip(self, reason: str) -> None:
        """Note something that could not be compared."""
        self._skipped.append(reason)

    def note_missing(self, path: Path) -> None:
        """Note a planned cassette that is not on disk."""
        self.missing.append(str(path))

    def fresh(self, *, shared: bool = False) -> SchemaDiffer:
        """An empty differ for the same suite (one per replay worker chunk); `shared`: one
        that reuses this one's per-adapter decisions, to collect a single cassette's share."""
        differ = SchemaDiffer(self.suite, allowed=self.allowed)
        if shared:
            differ._reducible = self._reducible
            differ._expected = self._expected
            differ._digests = self._digests
        return differ

    def collected(self) -> Collected:
        """What was collected so far, before any diffing."""
        seen = tuple(
            SeenRequests(expected, fingerprint, s.body, s.uri, s.example, s.count)
            for (expected, fingerprint), s in self._seen.items()
        )
        missing, skipped = tuple(self.missing), tuple(self._skipped)
        return Collected(seen, self._requests, self._cassettes, missing, skipped)

    def absorb(self, collected: Collected) -> None:
        """Add what `collected` holds, as if its cassettes were added here."""
        for item in collected.seen:
            key = (item.expected, item.fingerprint)
            mine = self._seen.get(key)
            if mine is None:
                self._seen[key] = _Seen(item.body, item.uri, item.example, item.count)
            else:
                mine.count += item.count
        self.missing += collected.missing
        self._skipped += collected.skipped
        self._requests += collected.requests
        self._cassettes += collected.cassettes

    def __getstate__(self) -> dict[str, Any]:
        # A worker sends back only what it collected; the suite (compiled
        # validators included) stays behind and cannot be pickled anyway.
        keep = ("allowed", "missing", "_skipped", "_seen", "_requests", "_cassettes")
        return {name: self.__dict__[name] for name in keep}

    def merge(self, other: Any) -> None:
        """Add what another differ collected (a replay worker's share)."""
        assert isinstance(other, SchemaDiffer)
        self.absorb(other.collected())

    def add(self, cassette: Cassette, unit: Unit) -> None:
        """Count every request of `cassette`, recorded for `unit`."""
        unreadable = _unreadable()
        self._cassettes += 1
        (name, adapter), example = _recording_adapter(cassette, unit), str(cassette.path)
        conversation = adapter.CAPABILITIES.conversation_keys
        if not _reads_back(adapter):
            self.skip(
                f"{example}: the {adapter.NAME} adapter cannot read its requests back "
                "(it has no sent_tools, read_request and wire_schema)"
            )
            return
        # A unit's expected settings differ only between its first step and the others.
        first: StepSettings | None = None
        later: StepSettings | None = None
        for index, item in enumerate(cassette.interactions):
            if isinstance(item, unreadable):
                self.skip(f"{example}: interaction {index + 1}: {item.reason}")
                continue
            interaction = cast("Interaction", item)
            body, uri = interaction.request.body, interaction.request.uri
            if not isinstance(body, dict):
                self.skip(f"{example}: interaction {index + 1}: request body is not a JSON object")
                continue
            label = interaction.label
            step = label.get("step") if label else None
            if not isinstance(step, int):
                step = adapter.read_request(body, uri).tool_result_turns
            if step == 0:
                expected = first = first or self._step_settings(unit, name, 0)
            else:
                expected = later = later or self._step_settings(unit, name, step)
            key = (expected, self._fingerprint(adapter, conversation, name, body, uri))
            seen = self._seen.get(key)
            if seen is None:
                self._seen[key] = _Seen(body, uri, example)
            else:
                seen.count += 1
            self._requests += 1

    def _step_settings(self, unit: Unit, adapter: str, step: int) -> StepSettings:
        # What they are made of: the unit's settings (one object for most of a target's
        # units, `unit_settings`) and its tools (by variant and case tool set); only the
        # first step's settings differ (a case's tool_choice is for its first turn).
        settings = unit_settings(self.suite, unit, step)
        target = unit.target.name
        cache_key = (id(settings), target, adapter, unit.variant, unit.case.tools)
        known = self._expected.get(cache_key)
        if known is not None and known[0] is settings:  # held: its id is not reused
            return known[1]
        expected = StepSettings(
            target=target,
            adapter=adapter,
            strict=settings.strict,
            tools=tuple(tool.name for tool in unit_tools(self.suite, unit)),
            choice=settings.tool_choice,
            parallel=settings.parallel_tool_calls,
        )
        if len(self._expected) >= 1024:
            self._expected.clear()
        self._expected[cache_key] = (settings, expected)
        return expected

    def _fingerprint(
        self,
        adapter: ReadBackAdapter,
        conversation: frozenset[str],
        name: str,
        body: dict[str, Any],
        uri: str,
    ) -> bytes:
        """A digest equal for requests that declare and choose tools the same way.

        The conversation, which changes every turn, is left out: the top-level
        keys the adapter fills from the history (its `Capabilities.conversation_keys`).
        On the first request of each adapter that declares tools, the reduced body is
        checked to read back the same tools, tool choice and parallel policy; where it
        does not, the whole body is the fingerprint.
        """
        reduced = {k: v for k, v in body.items() if k not in conversation}
        reducible = self._reducible.get(name)
        if reducible is None:
            full, part = adapter.read_request(body, uri), adapter.read_request(reduced, uri)
            same = (full.tool_choice, full.parallel_tool_calls, full.tool_names) == (
                part.tool_choice,
                part.parallel_tool_calls,
                part.tool_names,
            ) and adapter.sent_tools(body) == adapter.sent_tools(reduced)
            if full.tool_names or not same:
                self._reducible[name] = reducible = same
        value = reduced if reducible else body
        # A digest of the exact bytes, which do not depend on which objects are shared;
        # reduced bodies repeat, and their pieces (`exact_parts`) find it again.
        parts = exact_parts(value)
        if parts is None:
            # Not plain JSON values (an odd YAML cassette); the marker keeps the two apart.
            exact = b"\0" + json.dumps(value, sort_keys=True, default=repr).encode()
            return hashlib.sha256(exact).digest()
        key = tuple(parts) if reducible else None
        digest = self._digests.get(key) if key is not None else None
        if digest is None:
            digest = hashlib.sha256(b"".join(parts)).digest()
            if key is not None and len(self._digests) < 4096:
                self._digests[key] = digest
        return digest

    def result(self, read_back: ReadBack | None = None) -> SchemaDiffResult:
        """Diff each distinct declaration once and fold identical changes (`read_back`:
        what was read back of requests already, to read the rest back into)."""
        reads = read_back if read_back is not None else ReadBack(self.suite.contract)
        declarations: set[DeclarationKey] = set()
        folder = Folder()
        for (expected, fingerprint), seen in self._seen.items():
            client = adapter = get_adapter(expected.adapter)
            assert _reads_back(adapter)  # `add` collects no other
            key, changes, view = reads.of(adapter, expected, fingerprint, seen.body, seen.uri)
            declarations.add(key)
            capabilities = client.CAPABILITIES
            knob = expected.choice.mode in capabilities.parallel_knob
            carried = expected.choice.mode in capabilities.tool_choice_modes
            found = changes + setting_differences(
                expected, view.tool_choice, view.parallel_tool_calls, knob=knob, carried=carried
            )
            for change in found:
                folder.add(expected.target, change, seen.count, seen.example)
        order = {target.name: index for index, target in enumerate(self.suite.config.targets)}
        entries = folder.entries(order, self._status)
        return SchemaDiffResult(
            entries=tuple(entries),
            requests=self._requests,
            blocking=tuple(e for e in entries if e.status == "blocking"),
            allowed=self.allowed,
            cassettes=self._cassettes,
            declarations=len(declarations),
            missing=tuple(self.missing),
            skipped=tuple(self._skipped),
        )

    def _status(self, kind: str) -> str:
        if kind == "lossless":
            return "lossless"
        return "allowed" if kind in self.allowed else "blocking"


@cache
def _unreadable() -> type[UnreadableInteraction]:
    # Imported with the first cassette added, not at the top (a check answered by its
    # cache reads no cassette), and once, not for every cassette.
    from fcreplay.cassettes.store import UnreadableInteraction

    return UnreadableInteraction


_READS_BACK: dict[int, tuple[ClientAdapter, bool]] = {}


def _reads_back(adapter: ClientAdapter) -> TypeGuard[ReadBackAdapter]:
    # A protocol check inspects every member: once per adapter, not per cassette.
    if (known := _READS_BACK.get(id(adapter))) is None or known[0] is not adapter:
        known = _READS_BACK[id(adapter)] = (adapter, isinstance(adapter, ReadBackAdapter))
    return known[1]


def _recording_adapter(cassette: Cassette, unit: Unit) -> tuple[str, ClientAdapter]:
    """The adapter that recorded a cassette (its fcreplay block names it), and its name.

    The unit's target adapter when it is the one named, or when the named one is no
    longer known (a renamed adapter, a cassette from elsewhere).
    """
    name, adapter = unit.target.adapter, get_adapter(unit.target.adapter)
    recorded = cassette.meta.adapter if cassette.meta else name
    if recorded in (name, adapter.NAME):
        return name, adapter
    try:
        return recorded, get_adapter(recorded)
    except ValueError:
        return name, adapter
