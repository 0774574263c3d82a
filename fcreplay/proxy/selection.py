"""Which cassette a request belongs to: one file for all, or one per test chosen by the client.

With a cassette folder, a client names its cassette either with the header
`x-fcreplay-cassette: NAME` or with a path prefix `/c/NAME/...` in its base URL
(for SDKs that cannot add headers). NAME is one or more `/`-separated segments
of letters, digits, `_`, `.` and `-` (a prefix segment may hold them as `%2F`),
each starting with a letter or digit; the file is `DIR/NAME.json`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

CASSETTE_HEADER = "x-fcreplay-cassette"
PATH_PREFIX = "/c/"
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
SUFFIX = ".json"


@dataclass(frozen=True)
class Choice:
    """The cassette of one request, and the request target without the selecting prefix."""

    name: str
    path: Path
    target: str


class Selector:
    """Picks the cassette of each request: `single` for all, or one per name under `folder`."""

    def __init__(self, *, single: Path | None = None, folder: Path | None = None) -> None:
        if (single is None) == (folder is None):
            raise ValueError("give exactly one of a cassette file and a cassette folder")
        self.single = single
        self.folder = folder

    def choose(self, target: str, headers: dict[str, str]) -> Choice | str:
        """The request's cassette, or what is wrong with how it named one."""
        named, rest = _prefix(target)
        header = headers.get(CASSETTE_HEADER)
        if self.single is not None:
            return Choice(self.single.stem, self.single, rest if named is not None else target)
        assert self.folder is not None
        name = header if header is not None else named
        if name is None:
            return (
                f"no cassette named: send the header `{CASSETTE_HEADER}: NAME` or put "
                f"`{PATH_PREFIX}NAME` before the API path in the client's base URL"
            )
        name = name.removesuffix(SUFFIX)
        segments = name.split("/")
        if not all(_SEGMENT.fullmatch(segment) for segment in segments):
            return (
                f"cassette name {name!r} is not usable: use letters, digits, '_', '.', '-' "
                "and '/' between parts, each part starting with a letter or digit"
            )
        return Choice(name, self.folder.joinpath(*segments[:-1], segments[-1] + SUFFIX), rest)


def _prefix(target: str) -> tuple[str | None, str]:
    """The name in a `/c/NAME/...` prefix and the target without it (None, target) if none."""
    if not target.startswith(PATH_PREFIX):
        return None, target
    name, slash, rest = target[len(PATH_PREFIX) :].partition("/")
    if not slash:
        name, _, query = name.partition("?")
        return unquote(name), "/" + (f"?{query}" if query else "")
    return unquote(name), "/" + rest
