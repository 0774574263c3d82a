"""cache codec: the readers take what the general shape checks take, and refuse the rest."""

from __future__ import annotations

import json
import math

import pytest

from fcreplay.cache import fold
from fcreplay.cache.codec import ShapeError, spent_from, text, texts, whole
from fcreplay.metrics import Tally
from fcreplay.operation import AttemptCost


class _Text(str):
    pass


def test_plain_readers_give_plain_values() -> None:
    assert texts(["a", _Text("b")]) == ("a", "b")
    assert type(texts([_Text("b")])[0]) is str
    assert type(text(_Text("c"))) is str
    assert whole(3) == 3
    for bad in (True, 1.0, "1", None):
        with pytest.raises(ShapeError):
            whole(bad)
    with pytest.raises(ShapeError):
        texts(["a", 1])
    with pytest.raises(ShapeError):
        texts(("a",))


def test_costs_read_alike_by_either_path() -> None:
    row = [True, 30, 20, 10, None, 1, 0.25]
    odd = [False, True, 20, 10, 5, 1, 1]  # a bool where a number goes: still a number
    read = spent_from([2, 0, [row, odd]])
    assert read.completed == [AttemptCost(*row), AttemptCost(*odd)]
    assert (read.attempted, read.errors) == (2, 0)
    for damaged in ([1, 30, 20, 10, None, 1, 0.25], [True, "30", 20, 10, None, 1, 0.25], row[:-1]):
        with pytest.raises((ShapeError, ValueError)):
            spent_from([1, 0, [damaged]])


@pytest.mark.parametrize("figure", [0.1 + 0.2, 1e16, 5e-324, float("inf"), float("nan")])
def test_a_folds_bytes_read_back_as_its_json_form(figure: float) -> None:
    made = fold.TargetFold(
        target="t",
        tallies=((Tally("t", "v"), {"cost_p50": figure, "completed": 2, "cost_total": None}),),
        shared={},
        diffs=(),
        unchanged=(("c", "v"),),
        stale=(),
        attempts=2,
        unsafe=0,
        problem_units=(),
    )
    back = json.loads(fold.fold_bytes(made))
    expected = fold.fold_json(made)
    if figure != figure:  # NaN is not equal to itself: written as NaN, not as null
        assert math.isnan(back["tallies"][0][1].pop("cost_p50"))
        expected["tallies"][0][1].pop("cost_p50")
    assert back == expected
