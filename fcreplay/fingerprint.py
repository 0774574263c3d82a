"""What a unit's requests were built from, hashed part by part, so stale recordings name a cause.

A cassette keeps the fingerprint it was recorded with and every attempt record the one
its run used; when a replay drifts, the parts that differ between the two say why the
recording no longer matches: the contract, the prompt, the settings, the adapter,
the case or the tool results.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from fcreplay.quickinit import quick

SHORT = 16
"""Hex digits kept of each hash: enough to tell versions apart, short enough to read."""

PARTS = ("contract", "prompt", "settings", "adapter", "case", "tool results")
"""Every part, in the order causes are listed."""


@quick
@dataclass(frozen=True, slots=True)
class Fingerprint:
    """Short hashes (and labels) of everything that goes into one unit's requests."""

    contract: str
    """The contract's hash."""
    prompt: str | None
    """Hash of the system prompt's text; None without a prompt."""
    prompt_version: str | None
    settings: str
    """Hash of the model id and the request settings of every turn."""
    adapter: str
    """`<name> <version>` of the adapter that built the requests."""
    case: str
    """Hash of what the case sends: its messages and tool choice."""
    tool_results: str | None
    """Hash of the fake executor's rules (what later turns send back); None without one."""

    def to_json(self) -> dict[str, Any]:
        """The fingerprint as written in cassettes and run logs."""
        return {
            "contract": self.contract,
            "prompt": self.prompt,
            "prompt_version": self.prompt_version,
            "settings": self.settings,
            "adapter": self.adapter,
            "case": self.case,
            "tool_results": self.tool_results,
        }

    @classmethod
    def from_json(cls, data: Any) -> Fingerprint | None:
        """Read a fingerprint; None for anything that is not one (an older file)."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                contract=str(data["contract"]),
                prompt=_optional(data.get("prompt")),
                prompt_version=_optional(data.get("prompt_version")),
                settings=str(data["settings"]),
                adapter=str(data["adapter"]),
                case=str(data["case"]),
                tool_results=_optional(data.get("tool_results")),
            )
        except KeyError:
            return None

    def changed_since(self, recorded: Fingerprint) -> tuple[str, ...]:
        """The parts (named as in PARTS) that differ from `recorded`, in PARTS order."""
        now, then = self._parts(), recorded._parts()
        return tuple(part for part in PARTS if now[part] != then[part])

    def _parts(self) -> dict[str, object]:
        return {
            "contract": self.contract,
            "prompt": self.prompt,
            "settings": self.settings,
            "adapter": self.adapter,
            "case": self.case,
            "tool results": self.tool_results,
        }


def text_hash(text: str) -> str:
    """The short hash of a text (the system prompt's, for instance)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:SHORT]


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)
