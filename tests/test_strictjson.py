"""Strict JSON: orjson parses, Python's parser decides and words whatever orjson would not.

Every value must come out as Python's parser gives it (types included: a 20-digit
integer stays an integer), and every refusal must read the same, whether the text is
small (walked) or a large document (checked with C-speed passes).
"""

from __future__ import annotations

import copy
import json
import tracemalloc
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fcreplay.jsonchecks as jsonchecks
import fcreplay.jsoncopy as jsoncopy
import fcreplay.strictjson as strictjson
from fcreplay.leanjson import loads_lean

PAD = b" " * 20_000
"""Makes any text a large document (the other checking path)."""

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=30,
)


def typed(value: Any) -> Any:
    """`value` with the type of every scalar beside it, so `1`, `1.0` and `True` differ."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def outcome(text: str | bytes, max_depth: int = 64) -> Any:
    try:
        return typed(strictjson.loads(text, max_depth=max_depth))
    except json.JSONDecodeError as exc:
        return type(exc).__name__, exc.msg  # the position moves with the padding
    except ValueError as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES)
def test_values_come_out_as_pythons_parser_gives_them(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    expected = typed(json.loads(text))
    assert outcome(text) == expected
    assert outcome(text.encode()) == expected
    assert outcome(text.encode() + PAD) == expected


@pytest.mark.parametrize("depth", [1, 2, 63, 64, 65, 66, 200])
@pytest.mark.parametrize(
    "shape",
    [
        lambda n: "[" * n + "]" * n,
        lambda n: "[" * n + "1" + "]" * n,
        lambda n: '{"a":' * n + "1" + "}" * n,
        lambda n: "[" * (n - 1) + "{}" + "]" * (n - 1) if n > 1 else "{}",
    ],
)
def test_nesting_is_refused_past_the_limit_alike_on_both_paths(shape: Any, depth: int) -> None:
    text = shape(depth)
    small, large = outcome(text), outcome(text.encode() + PAD)
    if depth <= 64:
        assert isinstance(small, list | dict)  # a value, not a refusal
    else:
        assert small[0] == "JSONLimitError" and "nested deeper than 64 levels" in small[1]
    assert large == small


@pytest.mark.parametrize(
    "text",
    [
        "[NaN]",
        '{"a": -Infinity}',
        "[1e999]",
        "[1, 2",
        '{"a": 1,}',
        "\ufeff{}",
        '["\\ud800"]',  # a lone surrogate escape: Python reads it, orjson does not
        "[18446744073709551616, -9223372036854775809]",
        '["18446744073709551616"]',
        '["f12345678901234567890123", 1]',
        "18446744073709551616",
        '{"a": [-18446744073709551616]}',
        "1" * 5000,
    ],
)
def test_what_orjson_refuses_or_reads_otherwise_is_decided_by_pythons_parser(text: str) -> None:
    # `_loads` is Python's parser alone: what `loads` answered before orjson came in.
    try:
        expected: Any = typed(strictjson._loads(text, 64))
    except json.JSONDecodeError as exc:
        expected = type(exc).__name__, exc.msg
    except ValueError as exc:
        expected = type(exc).__name__, str(exc)
    assert outcome(text) == expected
    assert outcome(text.encode() + PAD) == expected


def test_exact_bytes_tell_true_one_and_one_point_zero_apart() -> None:
    assert len({strictjson.exact_json([value]) for value in (True, 1, 1.0)}) == 3
    assert strictjson.exact_json({"b": 1, "a": 2}) != strictjson.exact_json({"a": 2, "b": 1})
    assert strictjson.exact_json({1: "not a string key"}) is None
    assert strictjson.exact_json(2**70) is None


def test_exact_bytes_take_their_size_in_memory_not_orjsons_buffer() -> None:
    # They are kept by the thousand (cache keys, digests): a buffer of a few KiB held
    # by each was most of what a replay worker grew by.
    values = [
        ["tool_call", f"answer {index}", False, [["lookup", {"id": index}, "{}"]]]
        for index in range(200)
    ]
    tracemalloc.start()
    try:
        kept = [strictjson.exact_json(value) for value in values]
        kept += [strictjson.sorted_exact_json(value) for value in values]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 400 * 200
    assert kept[0] == b'["tool_call","answer 0",false,[["lookup",{"id":0},"{}"]]]'


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES | st.tuples(VALUES, st.sets(st.integers(), max_size=3)))
def test_a_copy_equals_deepcopys_and_shares_no_container_with_the_original(value: Any) -> None:
    made = jsoncopy.copied(value)
    assert typed(made) == typed(copy.deepcopy(value))

    def containers(item: Any) -> list[Any]:
        if isinstance(item, dict):
            return [item, *(c for member in item.values() for c in containers(member))]
        if isinstance(item, list | tuple | set):
            return [item, *(c for member in item for c in containers(member))]
        return []

    mutable = {id(c) for c in containers(value) if not isinstance(c, tuple)}
    assert not mutable & {id(c) for c in containers(made) if not isinstance(c, tuple)}


KEPT = [[{"name": "lookup", "n": 1}], [None, {"deep": [1.0, True]}]]
"""Values interned once, as a suite's tool lists are: members the pieces keep whole."""
for _kept in KEPT:
    strictjson.interned(_kept)
MEMBERS = st.dictionaries(
    st.sampled_from(["tools", "model", "null", "a"]), st.sampled_from(KEPT) | VALUES, max_size=4
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MEMBERS, st.sampled_from(["tools", "model", "null", "a"]), st.integers(0, 2))
def test_pieces_join_to_the_exact_bytes_and_compare_as_they_do(
    body: dict[str, Any], key: str, change: int
) -> None:
    parts = strictjson.exact_parts(body)
    exact = strictjson.exact_json(body)
    assert (None if parts is None else b"".join(parts)) == exact
    assert strictjson.exact_members(body) == exact
    # The same body with one member an equal copy (not interned), or another value.
    other = dict(body)
    if key in other:
        other[key] = copy.deepcopy(other[key]) if change else KEPT[0]
    one, two = strictjson.exact_json(body), strictjson.exact_json(other)
    same = one is not None and one == two and (b"null" not in one or body == other)
    assert strictjson.exactly_same(body, other) is same


TRAPS = st.recursive(
    st.sampled_from([0, 1, 0.0, -0.0, 1.0, True, False, None, 2**64, float("nan"), "1"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "tools"]), children, max_size=3)
    ),
    max_leaves=8,
)
"""Values `==` calls equal though their JSON differs (and NaN, and a number JSON cannot hold)."""


@settings(max_examples=500, deadline=None)
@given(TRAPS | MEMBERS, TRAPS | MEMBERS)
def test_exactly_same_is_equal_exact_bytes_whatever_equality_says(left: Any, right: Any) -> None:
    one, two = strictjson.exact_json(left), strictjson.exact_json(right)
    same = one is not None and one == two and left == right
    assert strictjson.exactly_same(left, right) is same
    # The same member, one object on both sides: compared by identity only when kept.
    shared = {"x": left, "y": right}
    again = {"x": left, "y": copy.deepcopy(right)}
    both = strictjson.exact_json(shared)
    expected = both is not None and both == strictjson.exact_json(again) and shared == again
    assert strictjson.exactly_same(shared, again) is expected


_PAD = " " * (1 << 20)  # past the size from which `loads_lean` takes Python's parser


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, "x", null, true], "b": {"c": 123456789012345678901234567890}}',
        '{"a": 1e999}',
        '{"a": NaN}',
        '{"a": -Infinity}',
        "[" * 100 + "]" * 100,
        "[" * 64 + "]" * 64,
        '{"a": "\\ud800"}',
        '{"a": 1,}',
    ],
)
def test_a_large_document_is_read_lean_as_pythons_parser_reads_it(text: str) -> None:
    for padded in (text, text + _PAD):
        try:
            expected: Any = strictjson._loads(padded, 64)  # Python's parser, every check
        except json.JSONDecodeError as exc:
            with pytest.raises(type(exc)) as raised:
                loads_lean(padded, max_depth=64)
            assert str(raised.value) == str(exc)
        else:
            assert loads_lean(padded, max_depth=64) == expected


def nested(depth: int, kind: str, inner: Any) -> Any:
    """`inner` in `depth` containers: lists, objects, or the two in turn."""
    value = inner
    for level in range(depth):
        shape = kind if kind != "mixed" else "list" if level % 2 else "object"
        value = [value] if shape == "list" else {"k": value, "n": 1}
    return value


@pytest.mark.parametrize("max_depth", [1, 2, 63, 64, 65, 199, 200, 253])
@pytest.mark.parametrize("kind", ["list", "object", "mixed"])
@pytest.mark.parametrize("inner", [1, "s", [], {}], ids=repr)
def test_the_written_bound_on_nesting_is_exact_either_side_of_the_limit(
    max_depth: int, kind: str, inner: Any
) -> None:
    # An empty container is a level of its own, as it is for the walk.
    extra = 1 if inner in ([], {}) else 0
    for depth in (max_depth - 1, max_depth, max_depth + 1):
        if depth - extra < 0:
            continue
        value = nested(depth - extra, kind, inner)
        assert strictjson.nested_past(value, max_depth) == (depth > max_depth)
        assert (jsonchecks.parsed_problem(value, max_depth) == "deep") == (depth > max_depth)


def test_orjsons_nesting_limit_is_the_one_found_at_import() -> None:
    deepest = strictjson._DEEPEST_WRITTEN
    assert deepest > 200  # past MAX_JSON_DEPTH: every allowed limit is bounded by writing
    orjson.dumps(nested(deepest, "list", 1))
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(nested(deepest + 1, "list", 1))


@pytest.mark.parametrize("max_depth", [64, 200])
@pytest.mark.parametrize(
    "shape",
    [
        lambda n: "[" * n + "]" * n,
        lambda n: '{"a":' * n + "1" + "}" * n,
        lambda n: '[{"a":' * (n // 2) + ("[]" if n % 2 else "1") + "}]" * (n // 2),
    ],
)
def test_a_large_document_at_the_limit_is_read_and_one_past_it_refused(
    max_depth: int, shape: Any
) -> None:
    for depth in (max_depth - 1, max_depth, max_depth + 1):
        text = shape(depth).encode() + PAD
        if depth <= max_depth:
            assert strictjson.loads(text, max_depth=max_depth) == json.loads(text)
        else:
            with pytest.raises(strictjson.JSONLimitError, match=f"deeper than {max_depth}"):
                strictjson.loads(text, max_depth=max_depth)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 18446744073709551616]}',  # a wide integer: an integer, as Python reads it
        '{"a": -9223372036854775809}',
        '{"a": 9223372036854775807, "b": 18446744073709551615}',  # 64 bits: orjson's own
        '{"a": 1e19, "b": 12345678901234567890.5}',  # floats that big stay floats
        '{"a": 1, "a": 2}',  # a repeated name: the last one, as Python keeps it
        '{"a": NaN}',
        '{"a": [Infinity]}',
        '{"a": "\\ud800"}',
    ],
)
def test_large_documents_read_wide_integers_repeats_and_refusals_as_python_does(
    text: str,
) -> None:
    padded = text[:-1] + ', "pad": "' + "p" * 5000 + '"}'
    for candidate in (padded, padded.encode()):
        assert outcome(candidate) == outcome_of_python(padded)


def outcome_of_python(text: str) -> Any:
    try:
        return typed(strictjson._loads(text, 64))
    except json.JSONDecodeError as exc:
        return type(exc).__name__, exc.msg


def test_bad_utf8_in_a_large_document_is_a_decode_error_as_before() -> None:
    text = b'{"a": "\xff\xfe", "pad": "' + b"p" * 5000 + b'"}'
    with pytest.raises(UnicodeDecodeError):
        strictjson.loads(text)
