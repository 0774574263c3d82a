"""Shards of a run: each unit (target/variant/case) belongs to one of N shards, by its name.

The assignment hashes the unit's name alone, so it is the same on every machine and
in every job, and adding a case moves only that case's units (nothing is rebalanced).
A CI matrix runs `check --shard K/N` once per K and merges the run logs afterwards.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_FORM = re.compile(r"([0-9]{1,4})/([0-9]{1,4})")

MAX_SHARDS = 1024
"""More shards than this gain nothing and would make a typo expensive."""


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based, as written: `2/4`)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, target: str, variant: str, case_id: str) -> bool:
        """Whether the unit target/variant/case_id is this shard's."""
        return shard_of(target, variant, case_id, self.count) == self.index


def parse_shard(text: str) -> Shard:
    """Read `K/N`; ValueError says what is wrong."""
    match = _FORM.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not K/N (for example 2/4: the second of four shards)")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ValueError(f"{text!r}: the shard count must be between 1 and {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise ValueError(f"{text!r}: the shard number must be between 1 and {count}")
    return Shard(index, count)


def shard_of(target: str, variant: str, case_id: str, count: int) -> int:
    """The shard (1..count) the unit target/variant/case_id belongs to."""
    digest = hashlib.sha256(f"{target}/{variant}/{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count + 1
