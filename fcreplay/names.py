"""Names that become file and folder names (targets, cases, run ids), and their one check.

A name read from a run log, a golden file or a cassette is checked as strictly as one
read from the configuration: each becomes part of a path, so `../x`, an absolute
path or a line break must never get through.
"""

from __future__ import annotations

import re

TARGET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
CASE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
VARIANTS = ("auto", "forced", "no_tools", "reversed")
"""auto: tools, model chooses; forced: the expected tool is forced (argument filling);
no_tools: control run with no tools; reversed: tool order reversed (position bias)."""


SEGMENT = re.compile(r"[A-Za-z0-9_\-\[\]=+,@][A-Za-z0-9_.\-\[\]=+,@]{0,199}")
"""One safe path segment: what a run log may name a target, variant or case with (the
pytest plugin's names included); never `.`, `..`, hidden, empty, or with a separator."""


def is_path_name(value: object, segments: int = 1) -> bool:
    """Whether `value` is 1 to `segments` safe segments joined by `/` (a relative path
    that stays where it is put)."""
    if not isinstance(value, str):
        return False
    parts = value.split("/")
    return len(parts) <= segments and all(SEGMENT.fullmatch(part) for part in parts)


def is_name(pattern: re.Pattern[str], value: object) -> bool:
    """Whether `value` is a string the whole of which matches `pattern`."""
    return isinstance(value, str) and pattern.fullmatch(value) is not None
