"""Which HTTP library a client is built on: httpx2 when it is installed, else httpx."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from fcreplay.clients.bridge import ClientLibrary

Flavor = Literal["httpx", "httpx2"]
FLAVORS: tuple[Flavor, ...] = ("httpx", "httpx2")
_MODULES: dict[Flavor, str] = {
    "httpx": "fcreplay.clients.httpx_lib",
    "httpx2": "fcreplay.clients.httpx2_lib",
}


def default_flavor() -> Flavor:
    """httpx2 when installed (what current SDKs need), else httpx (what older ones take)."""
    # Imported already (as by an SDK built on it) means installed, without a path search.
    if "httpx2" in sys.modules or importlib.util.find_spec("httpx2") is not None:
        return "httpx2"
    return "httpx"


def library(flavor: str | None = None) -> ClientLibrary:
    """The client library of `flavor` (default: `default_flavor()`), imported on first use.

    ValueError names the flavors for an unknown one; ImportError says what to install.
    """
    chosen = default_flavor() if flavor is None else flavor
    for known in FLAVORS:
        if chosen == known:
            try:
                module = importlib.import_module(_MODULES[known])
            except ImportError as exc:
                raise ImportError(f"flavor={known!r} needs {known}: pip install {known}") from exc
            found: ClientLibrary = module.LIBRARY
            return found
    raise ValueError(f"flavor {chosen!r}: expected one of {', '.join(FLAVORS)}")
