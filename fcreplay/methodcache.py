"""The methods dataclasses generate, compiled once per installation as Python keeps bytecode.

Each frozen dataclass compiles five or six generated methods from source when its module
is imported; a `check` imports about 110 of them before its workers start, and compiling
them was a quarter of that start. Inside `kept()`, `dataclasses` finds the code of a
method source it has compiled before in a file next to fcreplay's bytecode: the same
source gives the same code, so a class built from it is the class it always was.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib.util
import marshal
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import CodeType
from typing import Any

_LIMIT = 4096
"""Sources kept at most: more means many versions' classes met; the file starts over."""


@contextmanager
def kept(path: str | None = None) -> Iterator[None]:
    """Dataclasses made inside reuse the compiled code of their methods' sources, kept in
    `path` (by default in fcreplay's `__pycache__`)."""
    tag = sys.implementation.cache_tag
    if tag is None or "exec" in vars(dataclasses):
        yield  # no bytecode for this Python, or already inside
        return
    if path is None:
        path = os.path.join(os.path.dirname(__file__), "__pycache__", f"methods.{tag}.marshal")
    known = _read(path)
    made: dict[str, CodeType] = {}

    def compiled_exec(source: Any, globals: Any = None, locals: Any = None) -> None:
        if type(source) is str:
            code = known.get(source) or made.get(source)
            if code is None:
                # As `exec` compiles it from `dataclasses`, whose code has no __future__ flags.
                code = made[source] = compile(source, "<string>", "exec", dont_inherit=True)
            source = code
        builtins.exec(source, globals, locals)

    setattr(dataclasses, "exec", compiled_exec)  # noqa: B010 (a module global, not an attribute)
    try:
        yield
    finally:
        delattr(dataclasses, "exec")
        if made and not sys.dont_write_bytecode:
            _write(path, made if len(known) + len(made) > _LIMIT else {**known, **made})


def _read(path: str) -> dict[str, CodeType]:
    try:
        with open(path, "rb") as file:
            # From bytes: `marshal.load` of a file reads it piece by piece, ten times slower.
            data = marshal.loads(file.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}  # none yet, or damaged: compiled again and written afresh
    # The bytecode's magic number, as a .pyc file has it: code objects of another build
    # are not read.
    if type(data) is not tuple or len(data) != 2 or data[0] != importlib.util.MAGIC_NUMBER:
        return {}
    if type(data[1]) is not dict:
        return {}
    return {
        source: code
        for source, code in data[1].items()
        if type(source) is str and type(code) is CodeType
    }


def _write(path: str, methods: dict[str, CodeType]) -> None:
    draft = f"{path}.{os.getpid()}"
    try:
        with open(draft, "wb") as file:
            marshal.dump((importlib.util.MAGIC_NUMBER, methods), file)
        os.replace(draft, path)  # another process's file is whole, or this one is
    except OSError:
        with suppress(OSError):
            os.remove(draft)
