"""The plugin's session: one run log for the tests that used fcreplay, golden checks, the summary.

Each process (the only one, or each pytest-xdist worker) appends its tests'
records to its own part, `runs/.<run_id>.<worker>.part`, as each test ends; when
the session finishes, the controlling process merges the parts into
`runs/<run_id>.jsonl`, ordered by test and exchange, and removes them, so `-n 2`
and `-n 0` give the same records. Golden entries are checked where the test runs;
entries to write (`--fcreplay-update`) and the names of the tests that ran travel
to the controller in xdist's worker output and are written once, there. Nothing
is written by a session whose tests never used the fixture.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcreplay.atomic import write_text_atomically
from fcreplay.golden.store import GoldenEntry, entry_of, golden_path, load_golden
from fcreplay.plugin.naming import TestName
from fcreplay.record import AttemptRecord
from fcreplay.runlog import RunLogWriter, read_run_log, record_line, run_log_path
from fcreplay.runmarks import RunEnd, run_end_line
from fcreplay.traffic.matching import show

UPDATE_HINT = "run `pytest --fcreplay-update` to accept"
REASON = "pytest --fcreplay-update"
Key = tuple[str, str]
"""(golden target, test name)"""


@dataclass
class PluginSession:
    """What one pytest process knows about fcreplay's use in the session."""

    runs: Path
    golden: Path
    run_id: str
    update: bool
    worker: str
    """xdist's worker id, or "main" without xdist."""
    used: bool = False
    checked: set[Key] = field(default_factory=set)
    writes: list[AttemptRecord] = field(default_factory=list)
    ran: set[Key] = field(default_factory=set)
    known: set[Key] = field(default_factory=set)
    cassettes_written: int = 0
    names: dict[Key, str] = field(default_factory=dict)
    """Node id of each (target, name), to refuse two tests sharing one file name."""
    _writer: RunLogWriter | None = None
    _order: list[tuple[tuple[str, str, tuple[str, int, str]], int, int]] = field(
        default_factory=list
    )
    """(sort key, start, end) of each line of this process's part, as appended."""
    _golden_cache: dict[str, dict[tuple[str, str], GoldenEntry]] = field(default_factory=dict)

    # --- tests -----------------------------------------------------------------------

    def claim(self, test: TestName) -> None:
        """Register a test using the fixture; ValueError when its file name is taken."""
        self.used = True
        key = (test.target, test.name)
        owner = self.names.setdefault(key, test.nodeid)
        if owner != test.nodeid:
            raise ValueError(
                f"{test.nodeid} and {owner} both map to the name {test.name!r}: rename one "
                "or give it its own cassette with @pytest.mark.fcreplay(cassette=...)"
            )

    def append(self, records: Sequence[AttemptRecord]) -> None:
        """Write a finished test's records to this process's part of the run log."""
        if self._writer is None:
            self._writer = RunLogWriter(self._part(self.worker), durable=False)
        for record in records:
            self._writer.append_line(record.key, record_line(record))
            start, end = self._writer.spans[record.key]
            self._order.append((_sort_key(record), start, end))

    def _part(self, worker: str) -> Path:
        return self.runs / f".{self.run_id}.{worker}.part"

    # --- golden ----------------------------------------------------------------------

    def check(self, test: TestName, records: Sequence[AttemptRecord]) -> None:
        """Compare a test's records with its golden entries; AssertionError unless updating."""
        __tracebackhide__ = True
        # Loaded by the first `assert_golden`: a session that makes none never needs it.
        from fcreplay.golden.diff import classify

        key = (test.target, test.name)
        self.checked.add(key)
        now = {(r.case_id, r.variant): entry_of([r]) for r in records}
        entries = self._entries(test.target)
        before = {k: e for k, e in entries.items() if k[0] == test.name}
        lines = []
        for entry_key in sorted(set(before) | set(now), key=_variant_order):
            kind = classify(before.get(entry_key), now.get(entry_key))
            if kind is not None:
                lines.append(
                    _diff_line(entry_key[1], kind, before.get(entry_key), now.get(entry_key))
                )
        if not lines:
            return
        if self.update:
            self.writes += records
            return
        path = golden_path(self.golden, test.target)
        raise AssertionError(
            "\n".join(
                [f"fcreplay: golden decisions of {test.name} ({path}):"]
                + [f"  {line}" for line in lines]
                + [f"  {UPDATE_HINT}"]
            )
        )

    def _entries(self, target: str) -> dict[tuple[str, str], GoldenEntry]:
        cached = self._golden_cache.get(target)
        if cached is None:
            golden = load_golden(self.golden, target)
            cached = self._golden_cache[target] = dict(golden.entries) if golden else {}
        return cached

    # --- across processes ------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        """What a worker hands the controller (JSON values only)."""
        return {
            "used": self.used,
            "checked": sorted(self.checked),
            "writes": [record.to_json() for record in self.writes],
            "cassettes": self.cassettes_written,
        }

    def merge(self, data: dict[str, Any]) -> None:
        """Add what a worker handed over."""
        self.used = self.used or bool(data["used"])
        self.checked |= {(t, n) for t, n in data["checked"]}
        self.writes += [AttemptRecord.from_json(item) for item in data["writes"]]
        self.cassettes_written += int(data["cassettes"])

    # --- the end ---------------------------------------------------------------------

    def close(self) -> None:
        """Close this process's part of the run log."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def finish(self) -> list[str]:
        """Merge the run log, write golden updates, and return the summary lines."""
        self.close()
        if not self.used:
            return []
        lines = [self._merge_run_log()]
        unused = self._unused()
        written = self._write_golden(unused)
        if self.checked or unused:
            shown = ", ".join(f"{target}/{name}" for target, name in sorted(unused)[:5])
            more = f" ({shown}{', ...' if len(unused) > 5 else ''})" if unused else ""
            line = (
                f"fcreplay golden: {len(self.checked)} checked, {written} written, "
                f"{len(unused)} {'removed' if self.update else 'unused'}{more}"
            )
            if unused and not self.update:
                line += "; run `pytest --fcreplay-update` to remove unused entries"
            lines.append(line)
        return lines

    def _merge_run_log(self) -> str:
        parts = sorted(self.runs.glob(f".{self.run_id}.*.part"))
        path = run_log_path(self.runs, self.run_id)
        if self._order and parts == [self._part(self.worker)]:
            # Only this process wrote: its lines are reordered as bytes, unparsed.
            data = parts[0].read_bytes()
            order = sorted(self._order, key=lambda item: item[0])
            lines = [data[start:end].decode("utf-8") for _, start, end in order]
            count = len(lines)
        else:
            records = [record for part in parts for record in read_run_log(part).records]
            records.sort(key=_sort_key)
            lines = [record_line(record) for record in records]
            count = len(records)
        end = run_end_line(RunEnd(self.run_id, "pytest", True, count))
        write_text_atomically(path, "".join(lines) + end)
        for part in parts:
            part.unlink()
        cassettes = (
            f"; {self.cassettes_written} cassettes written" if self.cassettes_written else ""
        )
        return f"fcreplay: run log {path} ({count} model exchanges){cassettes}"

    def _unused(self) -> set[Key]:
        """Golden entries' tests of the modules that ran, which nothing checked: tests that
        ran without `assert_golden`, or that no longer exist."""
        targets = {target for target, _ in self.ran}
        found = set()
        for target in targets:
            for case_id, _ in self._entries(target):
                key = (target, case_id)
                if key not in self.checked and (key in self.ran or key not in self.known):
                    found.add(key)
        return found

    def _write_golden(self, unused: Iterable[Key]) -> int:
        if not self.update:
            return 0
        # Loaded by `--fcreplay-update` only.
        from fcreplay.cassettes.redaction import SecretGuard
        from fcreplay.golden.update import update_golden

        written = 0
        by_target: dict[str, list[AttemptRecord]] = {}
        for record in self.writes:
            by_target.setdefault(record.target, []).append(record)
        for target, records in sorted(by_target.items()):
            cases = sorted({record.case_id for record in records})
            for result in update_golden(
                self.golden, records, reason=REASON, targets=[target], case_ids=cases, prune=True
            ):
                written += len(result.updated) + len(result.removed)
        for target in sorted({t for t, _ in unused}):
            golden = load_golden(self.golden, target)
            if golden is None:
                continue
            gone = {name for t, name in unused if t == target}
            golden.entries = {k: e for k, e in golden.entries.items() if k[0] not in gone}
            path = golden_path(self.golden, target)
            text = golden.to_text()
            SecretGuard().check(text, where=f"golden file {path}")
            write_text_atomically(path, text)
        return written


def _sort_key(record: AttemptRecord) -> tuple[str, str, tuple[str, int, str]]:
    """The run log's order: by test, then exchange."""
    return (record.test or "", record.case_id, _variant_order((record.case_id, record.variant)))


def _variant_order(key: tuple[str, str]) -> tuple[str, int, str]:
    """Exchanges in their order (`exchange-10` after `exchange-9`)."""
    case_id, variant = key
    number = variant.rpartition("-")[2]
    return (case_id, int(number) if number.isdigit() else -1, variant)


def _diff_line(variant: str, kind: str, before: GoldenEntry | None, now: GoldenEntry | None) -> str:
    if before is None and now is not None:
        return f"{variant}: new: no golden entry yet (now {now.summary()})"
    if now is None and before is not None:
        return (
            f"{variant}: missing: the golden has {before.summary()}, the test made no such exchange"
        )
    from fcreplay.golden.diff import argument_changes

    assert before is not None and now is not None
    changes = argument_changes(before, now)
    detail = (
        "; ".join(f"{c.path}: {show(c.before)} -> {show(c.after)}" for c in changes)
        or f"{before.summary()} -> {now.summary()}"
    )
    return f"{variant}: {kind}: {detail}"
