"""Each cassette's share of the schema diff, collected as the replay reads it, kept as JSON.

The replay shows every cassette to `UnitShares` (in place of the schema differ); it
collects each one on its own, with a differ that shares the run's per-adapter
decisions. Requests are told apart by a hash of their fingerprint, and one body is
kept per fingerprint for the whole run, so a share is a few counts.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fcreplay.engine.plan import Unit
from fcreplay.neutral import ToolChoice
from fcreplay.schemadiff.differ import SchemaDiffer
from fcreplay.schemadiff.result import Collected, SeenRequests
from fcreplay.schemadiff.tool_settings import StepSettings

if TYPE_CHECKING:
    from fcreplay.cassettes.store import Cassette

Request = tuple[str, str]
"""(body as it was read, URI) of the first request of one fingerprint."""


@dataclass(frozen=True)
class Share:
    """One cassette's requests, as the schema diff counts them."""

    seen: tuple[tuple[StepSettings, str, int], ...]
    """(expected settings, fingerprint hash, count) per distinct request."""
    requests: int
    cassettes: int
    missing: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

    def collected(self, example: str, bodies: Mapping[str, tuple[Any, str]]) -> Collected:
        """The share as the differ takes it back (`bodies`: fingerprint hash -> request)."""
        seen = tuple(
            SeenRequests(expected, bytes.fromhex(hashed), *bodies[hashed], example, count)
            for expected, hashed, count in self.seen
        )
        return Collected(seen, self.requests, self.cassettes, self.missing, self.skipped)


class UnitShares:
    """A cassette observer that keeps each cassette's share, keyed by its path."""

    def __init__(self, differ: SchemaDiffer | None) -> None:
        self._differ = differ
        self.shares: dict[str, Share] = {}
        self.bodies: dict[str, tuple[Any, str]] = {}
        """Fingerprint hash -> the first request of that fingerprint."""
        self._settings: dict[StepSettings, StepSettings] = {}
        self._encoded: dict[tuple[Any, ...], tuple[bytes, Share]] = {}
        self._named: dict[bytes, str] = {}
        """Fingerprint -> its hash, for those whose body `bodies` holds."""
        self._sent: dict[str, _ShareFields] | None = None
        """The shares as a worker sent them (`__getstate__`), for `merge`."""

    def encoded(self, share: Share) -> bytes:
        """`share_json(share)` as compact JSON bytes; equal shares (units whose requests
        the differ counts alike: most, in a large suite) are encoded once. Told apart
        by their settings' identity (`merge` keeps one object per value), not hashed
        (a dataclass hashes in Python); the share is kept, so no identity is reused."""
        key = (
            tuple([(id(e), hashed, count) for e, hashed, count in share.seen]),
            share.requests,
            share.cassettes,
            share.missing,
            share.skipped,
        )
        found = self._encoded.get(key)
        if found is None:
            found = self._encoded[key] = (_JSON.encode(share_json(share)).encode(), share)
        return found[0]

    def add(self, cassette: Cassette, unit: Unit) -> None:
        assert self._differ is not None  # only a worker's own, unpickled copies lack it
        one = self._differ.fresh(shared=True)
        one.add(cassette, unit)
        self._keep(str(cassette.path), one.collected())

    def settle(self, cassette: Cassette, unit: Unit) -> None:
        """Let `cassette` make the differ's per-adapter decisions before any share is taken
        (what it collects is dropped): taken from the first cassette of each adapter in plan
        order, they do not depend on which units a run replays, nor in which order."""
        assert self._differ is not None
        self._differ.fresh(shared=True).add(cassette, unit)

    def note_missing(self, path: Path) -> None:
        self.shares[str(path)] = Share((), 0, 0, (str(path),))

    def _keep(self, path: str, collected: Collected) -> None:
        seen = []
        bodies, named = self.bodies, self._named
        for item in collected.seen:
            # Most cassettes send requests of a few fingerprints (the same bytes objects,
            # kept by the differ): each is hashed and its body kept once.
            hashed = named.get(item.fingerprint)
            if hashed is None:
                hashed = hashlib.sha256(item.fingerprint).hexdigest()[:32]
                bodies.setdefault(hashed, (item.body, item.uri))
                if len(named) < 4096:
                    named[item.fingerprint] = hashed
            seen.append((item.expected, hashed, item.count))
        self.shares[path] = Share(
            tuple(seen), collected.requests, collected.cassettes, (), collected.skipped
        )

    def fresh(self) -> UnitShares:
        # A worker's: it keeps the settled decisions (its copy of them, after the fork).
        return UnitShares(None if self._differ is None else self._differ.fresh(shared=True))

    def merge(self, other: Any) -> None:
        assert isinstance(other, UnitShares)
        # A worker's settings come unpickled, each its own copy: one kept per distinct
        # value, or a large suite's shares would hold its tool names thousands of times.
        # One pickle keeps one object per value it met: looked up by identity, each is
        # hashed (a dataclass of tuples) once per chunk, not once per request.
        known, mine = self._settings, self.shares
        ours: dict[int, StepSettings] = {}
        sent = other._sent if other._sent is not None else _fields(other.shares)
        for path, (items, requests, cassettes, missing, skipped) in sent.items():
            seen = []
            for expected, hashed, count in items:
                kept = ours.get(id(expected))
                if kept is None:
                    kept = ours[id(expected)] = known.setdefault(expected, expected)
                seen.append((kept, sys.intern(hashed), count))
            mine[path] = Share(tuple(seen), requests, cassettes, missing, skipped)
        for hashed, request in other.bodies.items():
            self.bodies.setdefault(hashed, request)

    def __getstate__(self) -> dict[str, Any]:
        # From a worker: what it collected; the differ (and its suite) stays there. The
        # shares go as plain tuples (thousands of dataclasses unpickle slowly), which the
        # parent's `merge` makes shares again.
        return {"shares": _fields(self.shares), "bodies": self.bodies}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._differ = None
        self._settings = {}
        self._encoded = {}
        self._named = {}
        self._sent = state["shares"]
        self.shares = {}  # a worker's shares are only merged (from `_sent`)
        self.bodies = state["bodies"]


_ShareFields = tuple[Any, int, int, tuple[str, ...], tuple[str, ...]]


def _fields(shares: dict[str, Share]) -> dict[str, _ShareFields]:
    return {
        path: (share.seen, share.requests, share.cassettes, share.missing, share.skipped)
        for path, share in shares.items()
    }


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def share_json(share: Share) -> list[Any]:
    """The JSON form (`share_from` reads it)."""
    seen = [
        [
            [
                e.target,
                e.adapter,
                e.strict,
                list(e.tools),
                e.choice.mode,
                e.choice.tool,
                e.parallel,
            ],
            hashed,
            count,
        ]
        for e, hashed, count in share.seen
    ]
    return [seen, share.requests, share.cassettes, list(share.missing), list(share.skipped)]


def share_from(data: Any) -> Share:
    """Read a share; ValueError (or TypeError) when it has the wrong shape."""
    seen_data, requests, cassettes, missing, skipped = data
    seen = []
    for settings, hashed, count in seen_data:
        target, adapter, strict, tools, mode, tool, parallel = settings
        if not (
            isinstance(target, str)
            and isinstance(adapter, str)
            and isinstance(strict, bool)
            and all(isinstance(t, str) for t in tools)
            and isinstance(mode, str)
            and isinstance(tool, str | None)
            and isinstance(parallel, bool | None)
            and isinstance(hashed, str)
            and type(count) is int
        ):
            raise ValueError("a schema-diff share of the wrong shape")
        bytes.fromhex(hashed)
        choice = ToolChoice(mode, tool)  # type: ignore[arg-type]
        seen.append(
            (StepSettings(target, adapter, strict, tuple(tools), choice, parallel), hashed, count)
        )
    if not (type(requests) is int and type(cassettes) is int):
        raise ValueError("a schema-diff share of the wrong shape")
    texts = [str(item) for item in missing if isinstance(item, str)]
    notes = [str(item) for item in skipped if isinstance(item, str)]
    if len(texts) != len(missing) or len(notes) != len(skipped):
        raise ValueError("a schema-diff share of the wrong shape")
    return Share(tuple(seen), requests, cassettes, tuple(texts), tuple(notes))
