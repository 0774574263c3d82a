"""Frozen dataclasses built about as fast as plain ones: the objects a replay makes per exchange.

The `__init__` a frozen dataclass gets stores each field through `object.__setattr__`
(its own `__setattr__` refuses every store): a call of about 80 ns a field, which made
a tenth of a replay worker's time (some 330,000 objects at 10,000 exchanges). `quick`
gives such a class an `__init__` with the same signature and defaults that stores as
a plain class does: into the instance's dictionary, or, for a class with slots, into
its slots while the instance is for a moment of a twin class with the same slots
(two class changes instead of a call per field). The class stays a frozen dataclass:
equality, hashing, `repr`, `replace`, pickling and the refusal of every later store
are dataclasses' own.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

_T = TypeVar("_T")

_HAS_FACTORY = object()
"""The default of a parameter whose field has a `default_factory` (as in dataclasses)."""


def quick(cls: type[_T]) -> type[_T]:
    """`cls`, a frozen dataclass of `object` without `__post_init__`, with the quick
    `__init__`; TypeError for any other class (it would need dataclasses' own)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or not params.init:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass with an __init__")
    if cls.__bases__ != (object,) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: only a dataclass of object, without __post_init__")
    made: Any = cls  # a dataclass, checked above
    fields = dataclasses.fields(made)
    if len(fields) != len(made.__dataclass_fields__):
        raise TypeError(f"{cls.__name__}: an InitVar or ClassVar field needs dataclasses' init")
    scope: dict[str, Any] = {"_HAS_FACTORY": _HAS_FACTORY, "_set": object.__setattr__}
    positional: list[str] = []
    keyword: list[str] = []
    stores: list[tuple[str, str]] = []
    for number, f in enumerate(fields):
        value = f.name
        if f.default is not dataclasses.MISSING:
            scope[default := f"_default_{number}"] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            scope[factory := f"_factory_{number}"] = f.default_factory
            default = "_HAS_FACTORY"
            value = f"{factory}() if {f.name} is _HAS_FACTORY else {f.name}"
            if not f.init:
                value = f"{factory}()"
        else:
            default = ""
        if f.init:
            param = f"{f.name}={default}" if default else f.name
            (keyword if f.kw_only else positional).append(param)
        elif not default:
            raise TypeError(f"{cls.__name__}.{f.name}: a field outside __init__ needs a default")
        else:
            value = value if f.default is dataclasses.MISSING else default
        stores.append((f.name, value))
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    if "__slots__" in cls.__dict__:
        scope["_cls"] = cls
        scope["_twin"] = type(f"_{cls.__name__}Twin", (), {"__slots__": made.__slots__})
        body = [
            "    _set(self, '__class__', _twin)",
            "    try:",
            *(f"        self.{name} = {value}" for name, value in stores),
            "    finally:",
            "        _set(self, '__class__', _cls)",
        ]
    else:
        body = ["    _d = self.__dict__"]
        body += [f"    _d[{name!r}] = {value}" for name, value in stores]
    source = f"def __init__({signature}):\n" + "\n".join(body or ["    pass"]) + "\n"
    # Through `methodcache` when inside `kept()`, which compiles a source once per installation.
    run = vars(dataclasses).get("exec", exec)
    run(source, scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    setattr(cls, "__init__", init)  # noqa: B010 - a method assigned (mypy refuses the plain form)
    return cls
