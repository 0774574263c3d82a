"""The adapter registry: built-in formats, registered adapters, entry points, import paths.

`get_adapter(name)` returns a built-in adapter, or one given to `register_adapter`;
otherwise a name with a colon, "package.module:attribute", is imported (a module or
an object; a class is instantiated without arguments), and any other name is looked
up among the installed `fcreplay.adapters` entry points (searched only then). Each is
resolved once and kept. Built-in modules are imported on first use, so
`fcreplay --help` stays light.

The registry proper (what the simulator serves and `api_for_url` recognises) is the
built-in adapters, then the registered ones in registration order; an adapter loaded
from an entry point joins them, one named by import path stays private to the targets
that name it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import cast

from fcreplay.adapters.capabilities import Capabilities
from fcreplay.adapters.protocol import ClientAdapter, missing_members

BUILT_IN: dict[str, str] = {
    "openai_chat": "fcreplay.adapters.openai_chat",
    "openai_responses": "fcreplay.adapters.openai_responses",
    "anthropic": "fcreplay.adapters.anthropic",
    "gemini": "fcreplay.adapters.gemini",
    "bedrock_converse": "fcreplay.adapters.bedrock_converse",
    "ollama": "fcreplay.adapters.ollama",
}
ENTRY_POINT_GROUP = "fcreplay.adapters"

_registered: dict[str, ClientAdapter] = {}
"""`register_adapter` adapters and loaded entry points, by name."""
_by_path: dict[str, ClientAdapter] = {}
"""Adapters resolved from "package.module:attribute", by that string."""


class UnknownAdapterError(ValueError):
    """No usable adapter by that name: unknown, not importable, or not an adapter."""


def register_adapter(name: str, adapter: object) -> None:
    """Make `adapter` (a module or object with the ClientAdapter members) known as `name`.

    A class is instantiated without arguments. Raises ValueError when the name is taken
    or holds a colon (import paths resolve on their own), TypeError when `adapter` is
    not an adapter.
    """
    if not name or ":" in name:
        raise ValueError(f"adapter name {name!r} must be non-empty, without ':'")
    if name in BUILT_IN or name in _registered:
        raise ValueError(f"adapter name {name!r} is already taken")
    checked = _as_adapter(adapter)
    if isinstance(checked, str):
        raise TypeError(f"cannot register {name!r}: {adapter!r} is {checked}")
    _registered[name] = checked


def get_adapter(name: str) -> ClientAdapter:
    """Return the adapter `name` resolves to (module doc); raise UnknownAdapterError."""
    module = BUILT_IN.get(name)
    if module is not None:
        return cast("ClientAdapter", importlib.import_module(module))
    for known in (_registered, _by_path):
        if name in known:
            return known[name]
    if ":" in name:
        adapter = _by_path[name] = _from_path(name)
    else:
        adapter = _registered[name] = _from_entry_point(name)
    return adapter


def adapters() -> Iterator[tuple[str, ClientAdapter]]:
    """(name, adapter) of the registry: the built-in adapters, then the registered ones."""
    for name in BUILT_IN:
        yield name, get_adapter(name)
    yield from list(_registered.items())


def api_for_url(url: str) -> str | None:
    """Name the registered adapter whose wire format a request URL uses, or None."""
    path = url.split("#", 1)[0].split("?", 1)[0]
    found = list(adapters())
    # Google-style methods first: they are found anywhere in the path, endings only at its end.
    for name, adapter in found:
        if any(m[0] == ":" and m in path for m in adapter.CAPABILITIES.url_markers):
            return name
    for name, adapter in found:
        if any(m[0] != ":" and path.endswith(m) for m in adapter.CAPABILITIES.url_markers):
            return name
    return None


def _from_path(spec: str) -> ClientAdapter:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UnknownAdapterError(f'{spec!r}: an import path reads "package.module:attribute"')
    try:
        value: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except Exception as exc:  # the user's module may fail in any way while importing
        raise UnknownAdapterError(f"cannot import {spec!r}: {type(exc).__name__}: {exc}") from None
    return _resolved(repr(spec), value)


def _from_entry_point(name: str) -> ClientAdapter:
    import importlib.metadata

    points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    chosen = next((point for point in points if point.name == name), None)
    if chosen is None:
        known = [*BUILT_IN, *_registered]
        known += sorted(point.name for point in points if point.name not in known)
        import difflib  # only for the error's suggestion

        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownAdapterError(
            f"unknown adapter {name!r}: must be one of {', '.join(known)}, "
            f'or "package.module:attribute"{hint}'
        )
    try:
        value = chosen.load()
    except Exception as exc:  # an installed plugin may fail in any way while importing
        raise UnknownAdapterError(
            f"cannot load the {ENTRY_POINT_GROUP} entry point {name!r} ({chosen.value}): "
            f"{type(exc).__name__}: {exc}"
        ) from None
    return _resolved(f"the {ENTRY_POINT_GROUP} entry point {name!r}", value)


def _resolved(what: str, value: object) -> ClientAdapter:
    checked = _as_adapter(value)
    if isinstance(checked, str):
        raise UnknownAdapterError(f"{what} is {checked}")
    return checked


def _as_adapter(value: object) -> ClientAdapter | str:
    """`value` as an adapter (a class is instantiated first), or why it is not one."""
    if isinstance(value, type):
        try:
            value = value()
        except Exception as exc:  # the user's class may fail in any way
            return f"a class that fails to instantiate: {type(exc).__name__}: {exc}"
    missing = missing_members(value, ClientAdapter)
    if missing:
        return f"not an adapter: it lacks {', '.join(missing)}"
    if not isinstance(getattr(value, "CAPABILITIES", None), Capabilities):
        return "not an adapter: its CAPABILITIES is not a fcreplay Capabilities"
    return cast("ClientAdapter", value)
