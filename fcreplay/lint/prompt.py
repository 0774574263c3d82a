"""Whether the prompt text moved without its `prompt_version`, judged from the cassettes.

Each cassette remembers the prompt it was recorded with (its fingerprint); a prompt
edited since, under the same version label, makes runs, reports and goldens that
say "delivery-router-v1" mean two different prompts.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from fcreplay.fingerprint import Fingerprint, text_hash
from fcreplay.inputs.suite import Suite


def prompt_version_warning(suite: Suite) -> str | None:
    """A warning when cassettes recorded under this prompt_version had another prompt text."""
    if suite.system_prompt is None or not suite.config.cassettes.is_dir():
        return None
    now, version = text_hash(suite.system_prompt), suite.config.prompt_version
    recorded: Counter[str] = Counter()
    for path in suite.config.cassettes.rglob("*.json"):
        fingerprint = _recorded_with(path)
        if fingerprint is not None and fingerprint.prompt_version == version:
            recorded[fingerprint.prompt or ""] += 1
    others = sum(count for digest, count in recorded.items() if digest != now)
    if not others:
        return None
    return (
        f"{suite.config.system_prompt}: the prompt text differs from the one {others} "
        f"cassette{'s were' if others != 1 else ' was'} recorded with, but prompt_version is "
        f"still {version!r}; give the edited prompt a new prompt_version so runs, reports and "
        "goldens tell the two apart"
    )


def _recorded_with(path: Path) -> Fingerprint | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # not readable here; replay and inspect say why
    block = document.get("fcreplay") if isinstance(document, dict) else None
    return Fingerprint.from_json(block.get("recorded_with")) if isinstance(block, dict) else None
