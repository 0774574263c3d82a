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


def is_name(pattern: re.Pattern[str], value: object) -> bool:
    """Whether `value` is a string the whole of which matches `pattern`."""
    return isinstance(value, str) and pattern.fullmatch(value) is not None
