"""One unit of a run: its cassette opened, its attempts run and judged, their records emitted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING

from fcreplay.adapters.protocol import ClientAdapter
from fcreplay.cassettes.capped import NO_LINKS
from fcreplay.engine.plan import Unit
from fcreplay.engine.sources import Source
from fcreplay.inputs.suite import Suite
from fcreplay.record import AttemptKey, AttemptRecord

if TYPE_CHECKING:
    from fcreplay.cassettes.store import CassetteMeta
    from fcreplay.cassettes.unit import UnitCassette
    from fcreplay.engine.players import Player
    from fcreplay.engine.unitwork import UnitWork
    from fcreplay.fingerprint import Fingerprint

Emit = Callable[[AttemptRecord], None]


@dataclass
class UnitRun:
    """What every unit of one run shares."""

    suite: Suite
    units: list[Unit]
    run_id: str
    done: set[AttemptKey]
    cassettes: Path
    adapters: dict[str, ClientAdapter]
    source: Source
    reads_disk: bool
    resuming: bool = False
    note: Callable[[str], None] | None = None
    """Where a unit's closing remark goes (a cassette kept, for instance)."""
    on_retry: Callable[[str], None] | None = None
    """Told of every retry while recording (replay never waits, so never says)."""
    _resolved: dict[Path, Path] = field(default_factory=dict)
    """The cassette folders resolved so far (`confine.confined`)."""
    _folders: dict[tuple[str, str], Path] = field(default_factory=dict)
    """Each target's variant's cassette folder (`Unit.cassette_folder`)."""

    @cached_property
    def _reads_only(self) -> bool:
        """Whether cassettes are only read, from where they stand (a replay, not resumed),
        by a read that can refuse a symlink (`capped.NO_LINKS`)."""
        return self.reads_disk and not self.resuming and self.source.label == "replay" and NO_LINKS

    def run_unit(self, unit: Unit, emit: Emit) -> None:
        """Run the attempts of one unit not already done, emitting each record."""
        CassetteMeta, UnitCassette, confined, run_attempt, unit_fingerprint, UnitWork = _machinery()
        repetitions = self.suite.config.repetitions
        adapter = self.adapters[unit.target.adapter]
        fingerprint = unit_fingerprint(self.suite, unit, adapter)
        meta = CassetteMeta(
            unit.target.name, adapter.NAME, unit.variant, unit.case.id, recorded_with=fingerprint
        )
        folder = self._folders.get(key := (unit.target.name, unit.variant))
        if folder is None:
            folder = self._folders[key] = unit.cassette_folder(self.cassettes)
        name = unit.cassette_name
        path = folder / name
        on_link = None
        if self._reads_only and folder in self._resolved and "/" not in name and "\\" not in name:
            # The folder is inside (a cassette in it was checked): only the file itself may
            # be a link that leads out, which the read refuses to follow without a check.
            on_link = partial(confined, path, self.cassettes, self._resolved)
        else:
            path = confined(path, self.cassettes, self._resolved)
        cassette = (
            UnitCassette.load(
                path, meta, self.suite.config.limits, staged=self.resuming, on_link=on_link
            )
            if self.reads_disk
            else UnitCassette(path, meta)
        )
        on_disk = cassette.cassette.meta if cassette.cassette is not None else None
        recorded_with = None if on_disk is None else on_disk.recorded_with
        if recorded_with == fingerprint:
            recorded_with = fingerprint  # one object for both: records are many
        done = self.done
        finished = (
            [
                n
                for n in range(1, repetitions + 1)
                if (unit.target.name, unit.variant, unit.case.id, n) in done
            ]
            if done  # a run resumed; a fresh one has done nothing yet
            else []
        )
        plan = self.source.open(unit, cassette, finished)
        work = UnitWork(self.suite, unit, adapter)
        complete = True
        for attempt in range(1, repetitions + 1):
            if attempt in finished:
                continue
            player: Player = plan.player(attempt)
            record = run_attempt(
                self.suite,
                unit,
                attempt,
                player,
                adapter=adapter,
                run_id=self.run_id,
                max_retries=self.suite.config.max_retries,
                fingerprint=fingerprint,
                recorded_with=recorded_with,
                cassette=str(path),
                on_retry=self.on_retry,
                work=work,
            )
            complete = complete and record.transport_error is None
            plan.keep(attempt)
            emit(record)
        note = plan.finish(complete)
        if note is not None and self.note is not None:
            self.note(note)


@cache
def _machinery() -> tuple[
    type[CassetteMeta],
    type[UnitCassette],
    Callable[..., Path],
    Callable[..., AttemptRecord],
    Callable[..., Fingerprint],
    type[UnitWork],
]:
    """What running a unit takes, imported with the first unit run, not at the top: a
    check whose units all come from its cache runs none, and need not load it (and an
    import in `run_unit` itself would cost a look-up for every unit)."""
    from fcreplay.cassettes.store import CassetteMeta
    from fcreplay.cassettes.unit import UnitCassette
    from fcreplay.confine import confined
    from fcreplay.engine.attempt import run_attempt
    from fcreplay.engine.fingerprints import unit_fingerprint
    from fcreplay.engine.unitwork import UnitWork

    return CassetteMeta, UnitCassette, confined, run_attempt, unit_fingerprint, UnitWork
