"""quickinit.quick: the same objects as dataclasses' own __init__ makes, still frozen."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from fcreplay.decision import Decision, Usage
from fcreplay.neutral import WireResponse
from fcreplay.quickinit import quick


@dataclass(frozen=True)
class PlainDict:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default=4, compare=False)
    e: int = field(default=5, init=False)
    g: list[int] = field(default_factory=lambda: [7], init=False)
    f: int = field(default=6, kw_only=True)


@quick
@dataclass(frozen=True)
class QuickDict:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default=4, compare=False)
    e: int = field(default=5, init=False)
    g: list[int] = field(default_factory=lambda: [7], init=False)
    f: int = field(default=6, kw_only=True)


@dataclass(frozen=True, slots=True)
class PlainSlots:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default=4, compare=False)
    e: int = field(default=5, init=False)
    g: list[int] = field(default_factory=lambda: [7], init=False)
    f: int = field(default=6, kw_only=True)


@quick
@dataclass(frozen=True, slots=True)
class QuickSlots:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default=4, compare=False)
    e: int = field(default=5, init=False)
    g: list[int] = field(default_factory=lambda: [7], init=False)
    f: int = field(default=6, kw_only=True)


def _pair(slots: bool) -> tuple[type[Any], type[Any]]:
    return (PlainSlots, QuickSlots) if slots else (PlainDict, QuickDict)


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((1,), {}),
    ((1, "x"), {}),
    ((1, "x", [2]), {"f": 9}),
    ((), {"a": 1, "c": [3], "d": 8}),
]


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_a_quick_init_makes_what_the_dataclass_init_makes(
    slots: bool, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    plain, fast = _pair(slots)
    want, got = plain(*args, **kwargs), fast(*args, **kwargs)
    assert type(got) is fast
    assert dataclasses.asdict(got) == dataclasses.asdict(want)
    assert repr(got).split("(", 1)[1] == repr(want).split("(", 1)[1]
    assert got.c is not fast(1).c  # a factory's value is made per object


@pytest.mark.parametrize("slots", [False, True])
def test_a_quick_class_stays_frozen_and_picklable(slots: bool) -> None:
    _, fast = _pair(slots)
    made = fast(1, "x", [2], f=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.a = 2
    assert pickle.loads(pickle.dumps(made)) == made
    assert dataclasses.replace(made, a=5) == fast(5, "x", [2], f=3)
    assert made == fast(1, "x", [2], d=0, f=3)  # d is not compared
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        fast()
    with pytest.raises(TypeError):
        fast(1, "x", [2], 4, 5)  # f is keyword-only


def test_a_failed_slots_init_leaves_no_twin_behind() -> None:
    calls = []

    def boom() -> list[int]:
        calls.append(1)
        raise RuntimeError("factory")

    @quick
    @dataclass(frozen=True, slots=True)
    class Thing:
        a: int
        c: list[int] = field(default_factory=boom)

    made = object.__new__(Thing)
    with pytest.raises(RuntimeError):
        Thing.__init__(made, 1)
    assert type(made) is Thing and calls == [1]


def test_quick_refuses_what_it_cannot_build() -> None:
    @dataclass
    class Open:
        a: int

    @dataclass(frozen=True)
    class Posted:
        a: int

        def __post_init__(self) -> None:
            pass

    for cls in (Open, Posted, int):
        with pytest.raises(TypeError):
            quick(cls)


def test_the_hot_records_are_quick_and_equal_to_their_fields() -> None:
    usage = Usage(1, 2)
    decision = Decision("text", "hi", (), "stop", usage=usage, model="m")
    assert (decision.kind, decision.text, decision.usage, decision.model) == (
        "text",
        "hi",
        usage,
        "m",
    )
    assert decision.raw_response is None and decision.stop == "end"
    response = WireResponse(200, {}, {"a": 1})
    assert dataclasses.replace(response, status=201).status == 201
