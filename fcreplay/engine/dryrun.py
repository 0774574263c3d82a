"""What `record` would do, without doing it: units, live requests, cassettes it would replace."""

from __future__ import annotations

from dataclasses import dataclass

from fcreplay.cassettes.store import load_cassette
from fcreplay.engine.plan import plan_units
from fcreplay.engine.runner import RecordOptions
from fcreplay.inputs.suite import Suite


@dataclass(frozen=True)
class RecordPlan:
    """The plan of a recording."""

    units: int
    attempts: int
    live_units: int
    live_requests: int
    """Requests that would go to the providers: the recorded count where a cassette
    shows how many an attempt took, else one per attempt (tool turns may add more)."""
    bound: str
    """"at least" when units have no cassette to count from, "at most" when what still
    matches would be replayed (new_episodes), else empty."""
    replaced: tuple[str, ...]
    """Cassettes that would be written over."""
    created: tuple[str, ...]
    replayed_units: int
    """Units answered from their cassettes (record mode once or new_episodes)."""

    def lines(self) -> list[str]:
        """The plan in words."""
        bound = f"{self.bound} " if self.bound else ""
        lines = [
            f"record plan: {self.units} units, {self.attempts} attempts",
            f"  live: {self.live_units} units, {bound}{self.live_requests} requests to providers",
        ]
        if self.replayed_units:
            lines.append(f"  answered from cassettes: {self.replayed_units} units")
        lines.append(f"  cassettes replaced: {len(self.replaced)}, created: {len(self.created)}")
        lines += [f"    replace {path}" for path in self.replaced[:20]]
        if len(self.replaced) > 20:
            lines.append(f"    … and {len(self.replaced) - 20} more")
        lines.append("nothing was sent or written (--dry-run)")
        return lines


def plan_recording(suite: Suite, options: RecordOptions) -> RecordPlan:
    """The plan of `record(suite, options)`, reading only the cassettes it would use."""
    units = plan_units(
        suite, targets=options.targets, variants=options.variants, case_ids=options.case_ids
    )
    repetitions = suite.config.repetitions
    cassettes = options.cassettes_dir or suite.config.cassettes
    live_units = live_requests = replayed = 0
    estimated = False
    replaced: list[str] = []
    created: list[str] = []
    for unit in units:
        path = unit.cassette_path(cassettes)
        exists = path.exists()
        if options.record_mode == "once" and exists:
            replayed += 1
            continue
        live_units += 1
        if exists:
            replaced.append(str(path))
            counted = len(load_cassette(path).interactions)
            live_requests += max(counted, repetitions)
        else:
            created.append(str(path))
            live_requests += repetitions
            estimated = True
    bound = "at most" if options.record_mode == "new_episodes" else ""
    bound = "at least" if estimated and not bound else bound
    return RecordPlan(
        units=len(units),
        attempts=len(units) * repetitions,
        live_units=live_units,
        live_requests=live_requests,
        bound=bound,
        replaced=tuple(replaced),
        created=tuple(created),
        replayed_units=replayed,
    )
