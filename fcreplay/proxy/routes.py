"""Where a proxied request goes: its upstream URL and the adapter that reads its wire format.

Three kinds of entry, tried in this order:

- `--route PREFIX=URL[,ADAPTER]`: a path prefix (longest first) sent to URL with the
  prefix taken off, read by ADAPTER (default: inferred from the rest of the path);
- `--upstream ADAPTER=URL`: requests whose path that adapter speaks;
- `--upstream URL`: everything else.

A URL is joined with the request's path as the client sent it, so it is the
provider's origin (`https://api.openai.com`), not its base URL with `/v1`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from fcreplay.adapters.registry import api_for_url, get_adapter


@dataclass(frozen=True)
class Route:
    """One path prefix sent to one upstream."""

    prefix: str
    """"/openai" (no trailing slash)."""
    upstream: str
    adapter: str | None
    """None: inferred from the path, as for every other request."""


@dataclass(frozen=True)
class Destination:
    """What the route table says about one request."""

    path: str
    """Path and query as the upstream and the cassette know it (a route's prefix removed)."""
    adapter: str | None
    """The wire format of the exchange; None for paths no adapter speaks."""
    url: str | None
    """Where to forward it; None when no upstream is configured for it."""


@dataclass(frozen=True)
class RouteTable:
    """Every upstream the proxy knows, by route, by adapter and by default."""

    routes: tuple[Route, ...] = ()
    by_adapter: tuple[tuple[str, str], ...] = ()
    default: str | None = None

    def resolve(self, target: str) -> Destination:
        """Where `target` (path and query) goes."""
        path = target.split("?", 1)[0]
        for route in sorted(self.routes, key=lambda r: len(r.prefix), reverse=True):
            if path == route.prefix or path.startswith(route.prefix + "/"):
                rest = target[len(route.prefix) :] or "/"
                adapter = route.adapter or api_for_url(rest)
                return Destination(rest, adapter, _join(route.upstream, rest))
        adapter = api_for_url(target)
        upstream = dict(self.by_adapter).get(adapter or "", self.default)
        return Destination(target, adapter, None if upstream is None else _join(upstream, target))

    @property
    def empty(self) -> bool:
        """Whether no upstream is configured at all (replay only)."""
        return not (self.routes or self.by_adapter or self.default)


def _join(upstream: str, target: str) -> str:
    return upstream.rstrip("/") + (target if target.startswith("/") else "/" + target)


def parse_routes(upstreams: Iterable[str], routes: Iterable[str]) -> RouteTable:
    """Build the table from `--upstream` and `--route` values; ValueError says what is wrong."""
    default: str | None = None
    by_adapter: dict[str, str] = {}
    for value in upstreams:
        name, equals, url = value.partition("=")
        if equals and not _looks_like_url(value):
            _known_adapter(name, value)
            by_adapter[name] = _url(url, value)
        else:
            if default is not None:
                raise ValueError(
                    f"--upstream {value!r}: a default upstream is already given "
                    f"({default}); name the adapter of the others: --upstream ADAPTER=URL"
                )
            default = _url(value, value)
    table: list[Route] = []
    for value in routes:
        prefix, equals, rest = value.partition("=")
        if not equals or not prefix.startswith("/") or not prefix.strip("/"):
            raise ValueError(
                f"--route {value!r}: expected /PREFIX=URL or /PREFIX=URL,ADAPTER "
                "(for every path, use --upstream URL)"
            )
        url, _, adapter = rest.partition(",")
        if adapter:
            _known_adapter(adapter, value)
        table.append(Route(prefix.rstrip("/"), _url(url, value), adapter or None))
    return RouteTable(tuple(table), tuple(by_adapter.items()), default)


def _looks_like_url(value: str) -> bool:
    return value.split("=", 1)[0].startswith(("http://", "https://"))


def _url(url: str, value: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{value!r}: {url!r} is not an http(s) URL")
    return url.rstrip("/")


def _known_adapter(name: str, value: str) -> None:
    try:
        get_adapter(name)
    except ValueError as exc:
        raise ValueError(f"{value!r}: {exc}") from None
