"""The dataclass methods compiled once and kept: the same classes, from a file or not."""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys
from pathlib import Path

import pytest

import fcreplay.methodcache as methodcache


def _point() -> type:
    return dataclasses.make_dataclass(
        "Point",
        [("x", int), ("y", "list[int]", dataclasses.field(default_factory=list))],
        frozen=True,
    )


def _behaves(cls: type) -> None:
    a, b = cls(1, [2]), cls(1, [2])
    assert a == b and a != cls(1) and hash(cls(1, ())) == hash(cls(1, ()))
    assert repr(a) == "Point(x=1, y=[2])"
    assert cls(3).y == []
    assert cls.__init__.__annotations__ == {"x": int, "y": "list[int]", "return": None}
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 2  # type: ignore[attr-defined]


@pytest.fixture
def writing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


@pytest.mark.usefixtures("writing")
def test_a_class_made_from_kept_code_is_the_class_compiled_afresh(tmp_path: Path) -> None:
    path = str(tmp_path / "methods.marshal")
    _behaves(_point())
    with methodcache.kept(path):
        _behaves(_point())
    assert "exec" not in vars(dataclasses)
    written = os.stat(path).st_mtime_ns
    compiled = []
    original = compile

    def counting(*args: object, **kwargs: object) -> object:
        compiled.append(args)
        return original(*args, **kwargs)  # type: ignore[call-overload]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("builtins.compile", counting)
        with methodcache.kept(path):
            _behaves(_point())
    assert compiled == []  # every method's code came from the file
    assert os.stat(path).st_mtime_ns == written  # nothing new: not written again


@pytest.mark.usefixtures("writing")
def test_a_damaged_file_is_compiled_again_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "methods.marshal"
    path.write_bytes(b"\x00not marshal")
    with methodcache.kept(str(path)):
        _behaves(_point())
    assert methodcache._read(str(path))


def test_nothing_is_written_without_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "methods.marshal"
    with methodcache.kept(str(path)):
        _behaves(_point())
    assert not path.exists()


@pytest.mark.usefixtures("writing")
def test_code_of_another_bytecode_version_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "methods.marshal"
    with methodcache.kept(str(path)):
        _behaves(_point())
    kept = marshal.loads(path.read_bytes())
    path.write_bytes(marshal.dumps((b"\x00\x00\r\n", kept[1])))
    assert methodcache._read(str(path)) == {}
