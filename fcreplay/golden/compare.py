"""What `fcreplay diff` compared: the two runs, how their targets pair, which inputs differ."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunSide:
    """One of the two runs: how it was named, and what its log says about it."""

    name: str
    """"A" (the baseline, before) or "B" (the candidate, after)."""
    given: str
    """The run id or path as the command was given it (what names it again)."""
    run_id: str
    path: str
    mode: str | None
    """"record", "replay", "proxy", ...; None when the log has no run-end record."""
    started: str | None
    """When the run started, from its id (`2025-01-02 10:00:00Z`); None when unknown."""
    state: str
    """How the run ended, in words (unfinished runs are compared only when named)."""
    attempts: int
    models: tuple[tuple[str, str], ...]
    """(target, model id) of every target the run ran, in record order."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "run_id": self.run_id,
            "path": self.path,
            "mode": self.mode,
            "started": self.started,
            "state": self.state,
            "attempts": self.attempts,
            "models": dict(self.models),
        }


@dataclass(frozen=True)
class InputChange:
    """One input that the two runs built their requests from differently."""

    part: str
    """One of `fingerprint.PARTS` ("contract", "prompt", "settings", "adapter", "case",
    "tool results"), or "fcreplay" for the version that judged the run."""
    units: int
    """Compared units (target × variant × case) in which it differs."""
    detail: str | None = None
    """What it was and became, when one change explains them all: `v1 → v2`."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"part": self.part, "units": self.units, "detail": self.detail}


@dataclass(frozen=True)
class RunComparison:
    """Two runs compared entry by entry: B's decisions against A's, as against goldens."""

    before: RunSide
    after: RunSide
    pairs: tuple[tuple[str, str], ...] = ()
    """(target in A, target in B) compared under different names (`--pair`)."""
    compared_units: int = 0
    """Units present in both runs (after pairing)."""
    inputs: tuple[InputChange, ...] = ()
    """What the compared units were built from differently; never a reason for `stale`."""
    only_before: tuple[str, ...] = ()
    """Targets of A that no target of B was compared with."""
    only_after: tuple[str, ...] = ()
    """Targets of B with no counterpart in A: every entry of theirs is `new`."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "pairs": [{"before": a, "after": b} for a, b in self.pairs],
            "compared_units": self.compared_units,
            "inputs_differ": [change.to_json() for change in self.inputs],
            "targets_only_before": list(self.only_before),
            "targets_only_after": list(self.only_after),
        }
