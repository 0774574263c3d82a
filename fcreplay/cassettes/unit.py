"""The cassette of one unit: interactions kept from disk plus those recorded in this run.

A recording is written beside the cassette first (`<case>.json.partial`, after every
attempt, so a killed run keeps what it paid for) and replaces the cassette only once
every attempt of the unit got its answer: a failed recording never overwrites a good one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from fcreplay.atomic import write_text_atomically
from fcreplay.cassettes.interactions import Interaction, UnreadableInteraction
from fcreplay.cassettes.redaction import SecretGuard
from fcreplay.cassettes.store import (
    Cassette,
    CassetteMeta,
    InteractionText,
    assemble_cassette,
    interaction_text,
    load_cassette_if_any,
)
from fcreplay.errors import InputError
from fcreplay.limits import DEFAULT_LIMITS, Limits
from fcreplay.quickinit import quick


@quick
@dataclass(frozen=True)
class PlacedInteraction:
    """A recorded interaction and its place in the run: attempt and step."""

    attempt: int
    step: int
    interaction: Interaction
    request_sha256: str | None = None
    """Hash of the request body as recorded (`WireRequest.body_sha256`); a replayed
    request that matches inherits it instead of serializing its body to hash it."""
    latency_ms: int | None = None
    """How long the provider took to answer, as measured when recorded."""

    @cached_property
    def text(self) -> InteractionText:
        """The interaction as it stands in the cassette's text, laid out once."""
        return interaction_text(replace(self.interaction, label=self.label))

    @property
    def label(self) -> dict[str, Any]:
        """The tag stored with the interaction: where it belongs in the run."""
        label: dict[str, Any] = {"attempt": self.attempt, "step": self.step}
        if self.request_sha256 is not None:
            label["request_sha256"] = self.request_sha256
        if self.latency_ms is not None:
            label["latency_ms"] = self.latency_ms
        return label


class UnitCassette:
    """The cassette of one unit (target × variant × case), attempt by attempt."""

    def __init__(
        self,
        path: Path,
        meta: CassetteMeta,
        placed: Sequence[PlacedInteraction] = (),
        cassette: Cassette | None = None,
    ) -> None:
        self.path = path
        self.meta = meta
        self._placed = list(placed)
        self.cassette = cassette
        """The cassette as read from disk, when it was."""

    @classmethod
    def load(
        cls,
        path: Path,
        meta: CassetteMeta,
        limits: Limits = DEFAULT_LIMITS,
        *,
        staged: bool = False,
        on_link: Callable[[], object] | None = None,
    ) -> UnitCassette:
        """Read a unit's cassette; a missing file gives an empty one.

        With `staged`, an unfinished recording waiting beside it is read instead;
        `on_link` as for `capped.read_capped`.
        """
        source = path
        if staged and staging_path(path).exists():
            source = staging_path(path)
        cassette = load_cassette_if_any(source, limits, on_link=on_link)
        if cassette is None:
            return cls(path, meta)
        placed = []
        for index, interaction in enumerate(cassette.interactions):
            if isinstance(interaction, UnreadableInteraction):
                raise InputError.at(source, None, f"interaction {index}: {interaction.reason}")
            label = interaction.label or {}
            attempt, step = label.get("attempt", 1), label.get("step", 0)
            digest = label.get("request_sha256")
            latency = label.get("latency_ms")
            placed.append(
                PlacedInteraction(
                    # Whole numbers, nearly always (`type`, not `isinstance`: no bool).
                    attempt
                    if type(attempt) is int and attempt >= 1
                    else _label_number(path, index, label, "attempt", 1),
                    step
                    if type(step) is int and step >= 0
                    else _label_number(path, index, label, "step", 0),
                    interaction,
                    digest if type(digest) is str else None,
                    latency if type(latency) is int else None,
                )
            )
        return cls(path, meta, placed, cassette)

    @property
    def exists(self) -> bool:
        """Whether the cassette file is on disk."""
        return self.path.exists()

    def of_attempt(self, attempt: int) -> list[PlacedInteraction]:
        """The interactions of one attempt, in recorded order."""
        return [placed for placed in self._placed if placed.attempt == attempt]

    def keep_only(self, attempts: Iterable[int]) -> None:
        """Forget the interactions of every attempt not listed (they are recorded again)."""
        keep = set(attempts)
        self._placed = [placed for placed in self._placed if placed.attempt in keep]

    def put(self, attempt: int, placed: Sequence[PlacedInteraction]) -> None:
        """Replace the interactions of one attempt."""
        self._placed = [p for p in self._placed if p.attempt != attempt] + list(placed)

    @property
    def staging(self) -> Path:
        """Where the recording waits until every attempt of the unit has its answer."""
        return staging_path(self.path)

    def save(self, guard: SecretGuard) -> None:
        """Write the recording so far beside the cassette, atomically, refusing it if it
        would hold a credential; `commit` puts it in the cassette's place."""
        ordered = sorted(self._placed, key=lambda placed: placed.attempt)
        text = assemble_cassette(self.meta, [placed.text for placed in ordered])
        guard.check(text, where=f"cassette {self.path}")
        write_text_atomically(self.staging, text)

    def commit(self) -> None:
        """Replace the cassette with the finished recording (an atomic rename)."""
        os.replace(self.staging, self.path)


def staging_path(path: Path) -> Path:
    """`<case>.json.partial`: beside the cassette, and not matched by `*.json`."""
    return path.with_name(path.name + ".partial")


def _label_number(path: Path, index: int, label: dict[str, Any], key: str, least: int) -> int:
    value = label.get(key, least)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InputError.at(
            path,
            None,
            f"interaction {index}: label.{key} {value!r} must be a whole number of at "
            f"least {least}; re-record the cassette or fix the label",
        )
    return value
