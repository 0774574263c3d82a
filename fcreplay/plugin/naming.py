"""Names a test gets in fcreplay's files: its cassette path, golden target and case id.

Defaults follow pytest-recording: `<test file's folder>/cassettes/<module>/<test>.json`,
where `<test>` is the test's name (`Class.test_name` in a class) with anything
unsafe in a file name (path separators, spaces, quotes, control characters)
replaced by `-`, so parametrized ids become file names. Golden entries live in
`golden/pytest/<module>.json` under the same name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

GOLDEN_TARGET = "pytest/{module}"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]=+,@]+")
_MAX_NAME = 200
"""Characters of a file name kept (file systems allow 255 bytes)."""


@dataclass(frozen=True)
class TestName:
    """One test as fcreplay's files name it."""

    nodeid: str
    module: str
    """The test file's name without `.py`."""
    name: str
    """File-safe: the case id of its records and golden entries, its cassette's stem."""
    folder: Path
    """The test file's folder."""

    @property
    def target(self) -> str:
        """The run-log target and golden file of the module: `pytest/<module>`."""
        return GOLDEN_TARGET.format(module=self.module)

    def cassette(self, given: str | Path | None) -> Path:
        """The cassette path: the marker's (relative to the test's folder) or the default."""
        if given is not None:
            path = Path(given)
            return path if path.is_absolute() else self.folder / path
        return self.folder / "cassettes" / self.module / f"{self.name}.json"


def safe_name(name: str) -> str:
    """A test name made safe as a file name (see the module doc)."""
    safe = _UNSAFE.sub("-", name).strip(".-") or "test"
    return safe[:_MAX_NAME]


def test_name(nodeid: str, path: Path, cls: str | None, name: str) -> TestName:
    """Name a test from its node id, file, class name and (parametrized) name."""
    full = f"{cls}.{name}" if cls else name
    return TestName(nodeid, path.stem, safe_name(full), path.parent)
