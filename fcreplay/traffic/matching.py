"""Request matching for client traffic: method, path and canonical JSON body, each answer once.

A request matches a recorded interaction when the method is the same, the path
and query are the same (the host is not compared: a base URL may point anywhere
at replay time; credential query keys were removed on both sides), and the bodies
are the same JSON value (`canonical.same_value`: key order never matters, `1` and
`true` stay different). Recorded interactions are tried in order and each answers
once, as pytest-recording does by default.

A request with no match is a `Miss` value, not an exception: it carries the
nearest recorded request and every difference from it, path by path, as
readable strings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fcreplay.canonical import same_value, sorted_json
from fcreplay.cassettes.interactions import Interaction, RecordedRequest
from fcreplay.strictjson import exact_json
from fcreplay.structdiff import MISSING, differences
from fcreplay.traffic.wire import path_of

_SHOWN = 80
"""Characters of a value shown in a difference line."""


@dataclass(frozen=True)
class Miss:
    """A request the cassette has no unplayed recording for."""

    request: RecordedRequest
    """The request as it was sent (credentials removed)."""
    nearest: int | None
    """Position in the cassette of the closest recorded request; None when it has none."""
    differences: tuple[str, ...]
    """How the request differs from the nearest one, one readable line per path."""
    played: bool = False
    """Whether the nearest recording already answered an earlier request."""

    @property
    def message(self) -> str:
        """The whole explanation, several lines."""
        head = f"no recorded answer for {self.request.method} {path_of(self.request.uri)}"
        if self.nearest is None:
            return head + ": the cassette holds no interactions"
        if not self.differences:
            return (
                f"{head}: the identical interaction {self.nearest} already answered an "
                "earlier request (each recorded interaction answers once)"
            )
        again = " (already played)" if self.played else ""
        lines = [f"{head}; the nearest recording, interaction {self.nearest}{again}, differs at:"]
        lines += [f"  {line}" for line in self.differences]
        return "\n".join(lines)


@dataclass(frozen=True)
class Match:
    """The recording that answers a request."""

    index: int
    """Its position in the cassette."""
    body_text: str | None
    """The recorded body's sorted JSON (`canonical.sorted_json`) when matching took it,
    so its digest needs no second serialization; None otherwise."""


class ExactIndex:
    """The recorded requests by method, path and exact body bytes (`strictjson.exact_json`),
    built once per cassette: a request sent as it was recorded is found without walking
    or serializing the recorded bodies again."""

    def __init__(self, interactions: Sequence[Interaction]) -> None:
        self._positions: dict[tuple[str, str, bytes], list[int]] = {}
        self._routes: list[tuple[str, str]] = []
        for index, interaction in enumerate(interactions):
            recorded = interaction.request
            route = (recorded.method, path_of(recorded.uri))
            self._routes.append(route)
            exact = exact_json(recorded.body)
            if exact is not None:
                self._positions.setdefault((*route, exact), []).append(index)

    def first(self, played: Sequence[bool], method: str, path: str, exact: bytes) -> int | None:
        """The first unplayed recording whose request has exactly these bytes, or None."""
        for index in self._positions.get((method, path, exact), ()):
            if not played[index]:
                return index
        return None

    def sent(self, played: Sequence[bool], method: str, path: str, content: bytes) -> int | None:
        """The recording that answers a request whose body bytes are exactly a recorded
        body's (`strictjson.exact_json`, as SDKs send JSON), found without parsing them;
        None when `find` must decide on the parsed body.

        Parsing them would give the value the bytes were written from: equal as `find`
        compares, and no other unplayed recording of the route comes before it (one might
        hold the same value with its keys in another order). A `null` may stand for a
        recorded NaN, which only `==` on the parsed value tells apart.
        """
        if content[:1] not in (b"{", b"[") or b"null" in content:
            return None
        hit = self.first(played, method, path, content)
        if hit is None:
            return None
        route = (method, path)
        for index in range(hit):
            if not played[index] and self._routes[index] == route:
                return None
        return hit


def find(
    interactions: Sequence[Interaction],
    played: Sequence[bool],
    method: str,
    path: str,
    body: Any,
    index: ExactIndex | None = None,
) -> Match | None:
    """The first unplayed interaction that matches, or None.

    With `index`, a recording of exactly the bytes sent is looked up first; only the
    unplayed recordings before it are compared one by one (one of them may hold the
    same value with its keys in another order, and the earliest answers). Without
    one, or when no recording has the exact bytes, every recording is compared.
    """
    method = method.upper()
    if index is not None and isinstance(body, dict | list):
        exact = exact_json(body) or b""
        hit = index.first(played, method, path, exact) if exact else None
        # Equal bytes are equal values, unless a non-finite float was written as null.
        if hit is not None and (b"null" not in exact or interactions[hit].request.body == body):
            earlier = _compared(interactions, played, method, path, body, hit)
            return Match(hit, None) if earlier is None else earlier
    return _compared(interactions, played, method, path, body, len(interactions))


def _compared(
    interactions: Sequence[Interaction],
    played: Sequence[bool],
    method: str,
    path: str,
    body: Any,
    end: int,
) -> Match | None:
    """The first unplayed match among the first `end` interactions, compared one by one.

    `==` rules most recordings out at C speed; it confuses `true` with `1`, so a
    recording it lets through is confirmed by comparing sorted JSON texts (the
    sent body's taken once), then canonically (`2.0` is `2`).
    """
    text: str | None = None
    for index in range(end):
        recorded = interactions[index].request
        if played[index] or not _route_matches(recorded, method, path) or recorded.body != body:
            continue
        if isinstance(body, bytes):
            return Match(index, None)  # equal bytes: no JSON value to tell `1` from `true` in
        if text is None:
            text = sorted_json(body)
        if sorted_json(recorded.body) == text:
            return Match(index, text)
        if same_value(recorded.body, body):
            return Match(index, None)
    return None


def _route_matches(recorded: RecordedRequest, method: str, path: str) -> bool:
    return recorded.method == method and path_of(recorded.uri) == path


def miss(
    interactions: Sequence[Interaction],
    played: Sequence[bool],
    request: RecordedRequest,
) -> Miss:
    """Explain a request with no match: the nearest recording and how it differs.

    Nearest: same method and path before anything else, then unplayed before
    played, then the fewest differing paths, then the earliest.
    """
    best: tuple[tuple[int, int, int, int], int, list[str]] | None = None
    method, path = request.method, path_of(request.uri)
    for index, interaction in enumerate(interactions):
        recorded = interaction.request
        lines = _route_lines(recorded, method, path)
        lines += body_differences(recorded.body, request.body)
        rank = (len(_route_lines(recorded, method, path)), int(played[index]), len(lines), index)
        if best is None or rank < best[0]:
            best = (rank, index, lines)
    if best is None:
        return Miss(request, None, ())
    _, index, lines = best
    return Miss(request, index, tuple(lines), played=played[index])


def _route_lines(recorded: RecordedRequest, method: str, path: str) -> list[str]:
    lines = []
    if recorded.method != method:
        lines.append(f"method: recorded {recorded.method}, now {method}")
    if path_of(recorded.uri) != path:
        lines.append(f"path: recorded {path_of(recorded.uri)}, now {path}")
    return lines


def body_differences(recorded: Any, now: Any) -> list[str]:
    """Every difference between two bodies, one line per path: `PATH: recorded X, now Y`."""
    if same_value(recorded, now):
        return []
    if not isinstance(recorded, dict | list) or not isinstance(now, dict | list):
        return [f"body: recorded {show(recorded)}, now {show(now)}"]
    return [
        f"{change.path or '/'}: recorded {show(change.before)}, now {show(change.after)}"
        for change in differences(recorded, now)
    ]


def show(value: Any) -> str:
    """A value on one line, cut to a readable length; `(missing)` for an absent one."""
    if value is MISSING:
        return "(missing)"
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
