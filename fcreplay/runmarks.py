"""The lines that bracket a run log: the header that opens it, the run-end that closes it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fcreplay.record import SCHEMA_VERSION, RecordShapeError
from fcreplay.shards import Shard, parse_shard

RUN_END_KEY = "run_end"
"""The key that tells the run-end record from an attempt record."""

RUN_HEADER = "fcreplay_run"
"""The key that marks a run log's header line."""
HEADER_VERSION = 1


@dataclass(frozen=True)
class RunHeader:
    """The first line of a run log: which run, in which mode, over what (its fingerprint)."""

    run_id: str
    mode: str
    """`record:<record mode>` or `replay`."""
    fingerprint: dict[str, Any]

    def to_line(self) -> str:
        """The header as its run-log line, newline included."""
        document = {
            RUN_HEADER: HEADER_VERSION,
            "run_id": self.run_id,
            "mode": self.mode,
            "fingerprint": self.fingerprint,
        }
        return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunHeader:
        """Read a header line's object; RecordShapeError names what is wrong."""
        if data.get(RUN_HEADER) != HEADER_VERSION:
            raise RecordShapeError(f"run header version {data.get(RUN_HEADER)!r}")
        run_id, mode, fingerprint = data.get("run_id"), data.get("mode"), data.get("fingerprint")
        if not (
            isinstance(run_id, str) and isinstance(mode, str) and isinstance(fingerprint, dict)
        ):
            raise RecordShapeError("a run header holds run_id, mode and fingerprint")
        return cls(run_id, mode, fingerprint)


@dataclass(frozen=True)
class RunScope:
    """What a run was asked to run: its selections (empty: everything configured)."""

    targets: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    shard: Shard | None = None
    """`check --shard K/N`: only the units of shard K ran."""

    def to_json(self) -> dict[str, Any]:
        """The scope as written in the run-end record (`shard` only when sharded)."""
        data: dict[str, Any] = {
            "targets": list(self.targets),
            "variants": list(self.variants),
            "cases": list(self.case_ids),
        }
        if self.shard is not None:
            data["shard"] = str(self.shard)
        return data

    @classmethod
    def from_json(cls, data: Any) -> RunScope:
        """Read a scope; anything else is the whole suite."""
        if not isinstance(data, dict):
            return cls()
        shard = None
        if isinstance(data.get("shard"), str):
            try:
                shard = parse_shard(data["shard"])
            except ValueError:
                raise RecordShapeError(f"shard {data['shard']!r} is not K/N") from None
        return cls(
            tuple(map(str, data.get("targets", ()))),
            tuple(map(str, data.get("variants", ()))),
            tuple(map(str, data.get("cases", ()))),
            shard,
        )

    def holds(self, target: str, variant: str, case_id: str) -> bool:
        """Whether the unit target/variant/case_id is among what the run was asked to run."""
        return (
            (not self.targets or target in self.targets)
            and (not self.variants or variant in self.variants)
            and (not self.case_ids or case_id in self.case_ids)
            and (self.shard is None or self.shard.owns(target, variant, case_id))
        )


@dataclass(frozen=True)
class RunEnd:
    """The last line of a run log: whether the run finished, and what it ran."""

    run_id: str
    mode: str
    """"record" or "replay"."""
    finished: bool
    attempts: int
    """Attempt records in the log."""
    reason: str | None = None
    """Why an unfinished run stopped (interrupted, an input error)."""
    scope: RunScope = RunScope()

    def to_json(self) -> dict[str, Any]:
        """The run-end line's object."""
        return {
            "schema_version": SCHEMA_VERSION,
            "run_id": self.run_id,
            RUN_END_KEY: {
                "mode": self.mode,
                "finished": self.finished,
                "attempts": self.attempts,
                "reason": self.reason,
                "scope": self.scope.to_json(),
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunEnd:
        """Read a run-end line's object; RecordShapeError when it is not one."""
        end = data.get(RUN_END_KEY)
        if not isinstance(end, dict) or not isinstance(data.get("run_id"), str):
            raise RecordShapeError("not a run-end record")
        return cls(
            run_id=data["run_id"],
            mode=str(end.get("mode", "")),
            finished=end.get("finished") is True,
            attempts=int(end.get("attempts", 0)),
            reason=None if end.get("reason") is None else str(end["reason"]),
            scope=RunScope.from_json(end.get("scope")),
        )

    @property
    def state(self) -> str:
        """How the run ended, in words."""
        if self.finished:
            return f"finished ({self.attempts} attempts)"
        return f"stopped after {self.attempts} attempts: {self.reason or 'unknown reason'}"


def run_end_line(end: RunEnd) -> str:
    """The run-end record as its run-log line, newline included."""
    return json.dumps(end.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"
