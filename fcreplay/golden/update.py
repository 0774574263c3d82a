"""`golden update`: set a target's golden entries from a run, all files or none."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fcreplay.atomic import write_group_atomically
from fcreplay.cassettes.redaction import SecretGuard
from fcreplay.golden.store import EntryKey, GoldenFile, golden_entries, golden_path, load_golden
from fcreplay.record import AttemptRecord


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
    guard: SecretGuard | None = None,
    in_scope: Callable[[EntryKey], bool] = lambda key: True,
) -> list[UpdateResult]:
    """Set the selected entries from a run's records; only changed entries get new provenance.

    `prune` also deletes the selected targets' entries (of the selected cases, and
    within what the run was asked to run: `in_scope`) that the run has no attempt for.
    Every changed file is written, or none is: a kill at any moment leaves all of them
    as they were or all of them updated. A file that would hold a credential refuses
    the whole update.
    """
    guard = guard or SecretGuard()
    changed: dict[str, str] = {}
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
            text = golden.to_text()
            guard.check(text, where=f"golden file {path}")
            changed[path.relative_to(folder).as_posix()] = text
        results.append(result)
    if changed:
        folder.mkdir(parents=True, exist_ok=True)
        write_group_atomically(folder, changed)
    return results
