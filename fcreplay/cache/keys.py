"""The key of each unit's cache entry: everything its records and schema-diff share depend on.

Shared by every unit: fcreplay's version and source, Python's, the libraries that
judge (their installed files), the suite configuration (but its golden and runs
folders and what only the serial tail reads), the contract, prompt and tool-results
files, the cases' version. Per unit: its target (adapter, version, settings), its
variant, its case and its cassette's bytes. Anything not listed is assumed not to
matter; a change of fcreplay's source invalidates everything, so a fix never
meets an entry made before it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path
from types import ModuleType

from fcreplay.adapters.registry import get_adapter
from fcreplay.cache.stats import ABSENT, LINKED, StatIndex
from fcreplay.engine.plan import Unit
from fcreplay.inputs.suite import Suite
from fcreplay.version import __version__

KEY_FORMAT = "1"
"""Changed whenever what a cache entry holds changes."""

_NOT_KEYED = frozenset(
    {
        "golden",
        "runs",
        "cache",
        "targets",
        "schema_diff_allow",
        "simulator_script",
        "request_timeout",
    }
)
"""Configuration fields a replay's records and schema-diff shares do not depend on
(targets are keyed per unit; schema_diff_allow is applied after the cache)."""

_JUDGING_LIBRARIES = ("jsonschema", "deepdiff", "yaml")

_PACKAGE = Path(__file__).resolve().parents[1]
"""fcreplay's own folder."""


class UnitKeys:
    """Computes unit keys for one suite; None for a unit that cannot be cached."""

    def __init__(self, suite: Suite, index: StatIndex) -> None:
        self._suite = suite
        self._index = index
        self._targets: dict[str, str] = {}
        self._cases: dict[str, str | None] = {}
        self.shared = _hash(self._shared_parts())

    def key(self, unit: Unit, cassette_path: str) -> str | None:
        """The unit's key (its cassette at `cassette_path`); None when it must be replayed
        (its cassette is a symlink, or its case cannot be told apart from another one)."""
        cassette = self._index.digest(cassette_path)
        if cassette == LINKED:
            return None  # the replay checks where it leads; the cache would not
        cases = self._cases
        case = cases[unit.case.id] if unit.case.id in cases else self._case(unit)
        if case is None:
            return None
        target = self._targets.get(unit.target.name) or self._target(unit)
        # `_hash` of the five parts, spelled out: a cold check keys every unit.
        text = f"{self.shared}\x00{target}\x00{unit.variant}\x00{case}\x00{cassette}\x00"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _shared_parts(self) -> list[str]:
        suite, config = self._suite, self._suite.config
        settings = [
            (f.name, repr(getattr(config, f.name)))
            for f in fields(config)
            if f.name not in _NOT_KEYED
        ]
        return [
            KEY_FORMAT,
            __version__,
            sys.version,
            _hash(f"{n} {self._index.digest(os.path.join(_PACKAGE, n))}" for n in _sources()),
            _hash(_library_stamp(name) for name in _JUDGING_LIBRARIES),
            repr(settings),
            self._index.digest(str(config.contract)),
            suite.contract.contract_hash,
            _hash([suite.system_prompt or ""]),
            ABSENT if config.tool_results is None else self._index.digest(str(config.tool_results)),
            suite.cases_version,
        ]

    def _target(self, unit: Unit) -> str:
        name = unit.target.name
        known = self._targets.get(name)
        if known is None:
            adapter = get_adapter(unit.target.adapter)
            # A module is an adapter as it is; an object's code is in its class's module.
            module = (
                adapter
                if isinstance(adapter, ModuleType)
                else sys.modules.get(type(adapter).__module__)
            )
            source = getattr(module, "__file__", None)
            # A user's adapter is keyed by its source too: its VERSION may lag its code.
            outside = source is not None and _PACKAGE not in Path(source).resolve().parents
            code = self._index.digest(source) if outside and source else ""
            known = _hash([repr(unit.target), adapter.NAME, adapter.VERSION, code])
            self._targets[name] = known
        return known

    def _case(self, unit: Unit) -> str | None:
        case_id = unit.case.id
        if case_id not in self._cases:
            text = repr(unit.case)
            # A value without a faithful repr (an object at an address) cannot be keyed.
            self._cases[case_id] = None if " at 0x" in text else _hash([text])
        return self._cases[case_id]


def _sources() -> list[str]:
    """fcreplay's .py files, relative to its folder, in the order of their paths' parts."""
    found = []
    for folder, folders, files in os.walk(_PACKAGE, followlinks=True):
        folders[:] = [name for name in folders if name != "__pycache__"]
        inside = os.path.relpath(folder, _PACKAGE)
        found += [name if inside == "." else os.path.join(inside, name) for name in files]
    return sorted((name for name in found if name.endswith(".py")), key=lambda n: n.split(os.sep))


def _library_stamp(name: str) -> str:
    """An installed library's identity: its entry file's stat (a new install rewrites it)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return f"{name} none"
    origin = spec.origin if spec is not None else None
    if origin is None:
        return f"{name} none"
    try:
        found = os.stat(origin)
    except OSError:
        return f"{name} none"
    return f"{name} {origin} {found.st_size} {found.st_mtime_ns} {found.st_ino}"


def _hash(parts: Iterable[object]) -> str:
    # Each part and a NUL after it, hashed in one call (a unit's key is five parts).
    text = "".join([str(part) + "\x00" for part in parts])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
