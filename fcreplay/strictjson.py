"""Strict JSON: parsing that refuses non-finite numbers and deep nesting, exact bytes for comparing.

Python's parser accepts `NaN`, `Infinity` and `1e999` (which becomes infinity), none
of which is JSON and none of which canonical JSON can write back; and it raises
RecursionError, not a syntax error, on arrays nested about a thousand deep, while
much shallower nesting already exhausts the stack of the recursive code that reads
the value afterwards. `loads` turns each of these into a `json.JSONDecodeError` with
the position of the offending text, so every caller that handles bad JSON handles
them too.

This is the only module that imports orjson. It parses first (several times faster
than Python's parser on cassettes); what it refuses or could read differently is
parsed again by Python's parser, which decides and words the error: orjson refuses
NaN, infinity, numbers that overflow and lone surrogates, and reads integers past
64 bits as floats (those are read again).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import orjson

import fcreplay.jsonchecks as jsonchecks
from fcreplay.jsonchecks import JSONLimitError as JSONLimitError
from fcreplay.jsonchecks import check_value as check_value
from fcreplay.limits import DEFAULT_LIMITS


def loads(text: str | bytes, *, max_depth: int = DEFAULT_LIMITS.max_json_depth) -> Any:
    """Parse JSON text; non-finite numbers, nesting deeper than `max_depth` and numbers
    Python will not convert raise `JSONLimitError` (a `json.JSONDecodeError`)."""
    return _parsed(text, max_depth, None)[0]


def loads_keyed(
    text: str | bytes, key: str, *, max_depth: int = DEFAULT_LIMITS.max_json_depth
) -> tuple[Any, int | None]:
    """`loads`, and how many members of objects anywhere in the value have the name `key`
    (a name JSON writes without escapes), when that comes at no extra pass: None when
    not counted (small texts, texts Python's parser read).

    A large text's value is written once to bound its nesting; in orjson's writing an
    object's member named `key` is always the bytes `"key":`, and a string never holds
    them (its quotes are escaped), except a name ending in `\"key`: the count is never
    lower than the truth, and exact but for such names.
    """
    needle = _NEEDLES.get(key)
    if needle is None:
        needle = orjson.dumps(key) + b":"
        if b"\\" in needle or needle.count(b'"') != 2:
            raise ValueError(f"{key!r} is written with escapes")
        _NEEDLES[key] = needle
    return _parsed(text, max_depth, needle)


_NEEDLES: dict[str, bytes] = {}
"""The bytes that name a member, by its name, for `loads_keyed`."""


def _parsed(text: str | bytes, max_depth: int, needle: bytes | None) -> tuple[Any, int | None]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _loads(text, max_depth), None
    count = None
    if isinstance(text, bytes) and len(text) >= _LARGE:
        # Two C-speed passes instead of a walk. An integer orjson made a float is a run
        # of 19 digits or more in the text, after no letter (any such run, even in a
        # string, sends the text to Python's parser); the nesting is bounded by writing
        # the value (`_written`), and only when that fails is the value walked.
        if jsonchecks.wide_run(text.translate(jsonchecks.DIGITS)):
            problem: str | None = "wide"
        elif (written := _written(value, max_depth)) is None:
            problem = jsonchecks.parsed_problem(value, max_depth)
        else:
            problem = None
            count = None if needle is None else written.count(needle)
    else:
        problem = jsonchecks.parsed_problem(value, max_depth)
    if problem is None:
        return value, count
    if problem == "deep":
        raise jsonchecks.too_deep(
            text if isinstance(text, str) else bytes(text).decode(), max_depth
        )
    return _loads(text, max_depth), None  # a float that may have been a wide integer


def _loads(text: str | bytes, max_depth: int) -> Any:
    """`loads` with Python's parser, which words every error."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8")
    try:
        value = json.loads(text, parse_constant=jsonchecks.constant)
    except jsonchecks.NonFinite as exc:
        raise jsonchecks.not_finite(str(exc.args[0]), text) from None
    except RecursionError:
        raise jsonchecks.too_deep(text, max_depth) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # e.g. an integer longer than Python converts
        raise JSONLimitError(f"unusable number: {exc}", text, 0) from None
    problem = check_value(value, max_depth)
    if problem == "deep":
        raise jsonchecks.too_deep(text, max_depth)
    if problem is not None:
        raise jsonchecks.not_finite(problem, text)
    return value


_LARGE = 4096
"""Bytes from which the C-speed passes of `_parsed` are cheaper than walking the value."""


def nested_past(value: Any, max_depth: int) -> bool:
    """Whether `value` may nest deeper than `max_depth` (False: it does not), at C speed;
    True also for a value orjson does not write (an integer past 64 bits)."""
    return _written(value, max_depth) is None


def _written(value: Any, max_depth: int) -> bytes | None:
    """orjson's bytes of `value` (compact, inside brackets) when they show it nests no
    deeper than `max_depth`; None when it may nest deeper, or orjson refuses it.

    orjson writes containers nested `_DEEPEST_WRITTEN` deep and refuses one more: in
    `_DEEPEST_WRITTEN - max_depth` one-element lists, `value` is written exactly when
    it nests `max_depth` deep or less. Past that reach (or with orjson's limit unknown),
    the value is written with two-space indents: a line indented by `2 * max_depth`
    spaces holds an element of a container `max_depth` deep, and without one no
    container is deeper.
    """
    wraps = _DEEPEST_WRITTEN - max_depth
    if wraps < 1:
        try:
            indented = orjson.dumps(value, option=orjson.OPT_INDENT_2)
        except orjson.JSONEncodeError:
            return None
        return None if b"\n" + b" " * (2 * max_depth) in indented else indented
    spare = _WRAPS.setdefault(wraps, [])
    try:
        outer, inner = spare.pop()
    except IndexError:  # the first call, or one in each other thread at the same time
        outer, inner = _wrap(wraps)
    inner[0] = value
    try:
        return orjson.dumps(outer)
    except orjson.JSONEncodeError:
        return None
    finally:
        inner[0] = None
        spare.append((outer, inner))


def _wrap(wraps: int) -> tuple[list[Any], list[Any]]:
    """`wraps` one-element lists, each in the next: the outermost and the innermost."""
    inner: list[Any] = [None]
    outer = inner
    for _ in range(wraps - 1):
        outer = [outer]
    return outer, inner


def _deepest_written() -> int:
    """How many containers orjson writes nested (254 in orjson 3.10 to 3.13), tried out
    once; 0 when it writes 4,096 (no limit that `_written` can use)."""

    def writes(depth: int) -> bool:
        try:
            orjson.dumps(_wrap(depth)[0])
        except orjson.JSONEncodeError:
            return False
        return True

    if writes(254) and not writes(255):
        return 254
    low, high = 1, 4096  # `low` is written; `high` is refused, or counts as no limit
    if writes(high):
        return 0
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if writes(middle) else (low, middle)
    return low


_DEEPEST_WRITTEN = _deepest_written()
_WRAPS: dict[int, list[tuple[list[Any], list[Any]]]] = {}
"""Spare one-element lists for `_written`, by how many: taken out while in use."""


def exact_json(value: Any) -> bytes | None:
    """Compact JSON bytes of `value`, keys in their order, telling `true`, `1` and `1.0`
    apart; None when `value` is not plain JSON data (a key that is not a string, an
    integer past 64 bits, a subclass of a JSON type, a dataclass...).

    Equal bytes mean equal values, except that NaN and infinity are written as `null`
    (orjson's rule): where a value may hold one, compare with `==` as well.
    """
    try:
        # orjson's bytes keep the 4 KiB buffer they were written into, whatever their
        # length; these are kept (cache keys, digests), so they are copied to their size.
        return b"%b" % orjson.dumps(value, option=_PLAIN)
    except TypeError:
        return None


def sorted_exact_json(value: Any) -> bytes | None:
    """`exact_json` with every object's keys sorted: equal bytes for values equal but for
    key order; None as for `exact_json`, and when it writes a `null` (which may stand
    for NaN): the caller falls back to `canonical.sorted_json`."""
    try:
        exact = orjson.dumps(value, option=_PLAIN | orjson.OPT_SORT_KEYS)
    except TypeError:
        return None
    return None if b"null" in exact else b"%b" % exact  # sized, as in `exact_json`


_PLAIN = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
"""Anything but plain data goes to the fallback (`default` is not given, so it raises)."""


def interned(value: Any) -> Any:
    """One read-only object for every value with the same exact JSON bytes, which are kept
    beside it: `exact_members` then skips it, and `exactly_same` compares it by identity.

    For values many documents hold alike and nobody changes (a suite's tool list, read
    from every cassette and built for every request). A value that is not plain JSON
    data, or holds NaN or infinity (written as null), comes back as it is.
    """
    mine = _EXACT.get(id(value))
    if mine is not None and mine[0] is value:
        return value
    exact = exact_json(value)
    if exact is None:
        return value
    known = _INTERNED.get(exact)
    if known is not None:
        # Without a null, equal bytes are equal values; with one, `==` tells None from NaN.
        return known if b"null" not in exact or known == value else value
    if len(_INTERNED) >= _INTERNED_LIMIT:
        return value
    if b"null" in exact and check_value(value, sys.getrecursionlimit()) is not None:
        return value
    _INTERNED[exact] = value
    _EXACT[id(value)] = (value, exact)
    return value


_INTERNED: dict[bytes, Any] = {}
_EXACT: dict[int, tuple[Any, bytes]] = {}
"""The exact bytes of each interned value, by its id (the entry holds the value, so the
id is not reused)."""
_INTERNED_LIMIT = 256
"""Distinct values kept at most; past it values are compared the ordinary way."""


def exact_members(value: Any) -> bytes | None:
    """`exact_json(value)`, with the interned members of a top-level object not written
    again (they are what makes the bytes long)."""
    parts = exact_parts(value)
    if parts is None:
        return None
    return parts[0] if len(parts) == 1 else b"".join(parts)


def exact_parts(value: Any) -> list[bytes] | None:
    """`exact_members(value)` in pieces that join to it: text written now, then the kept
    bytes of an interned member (the very object `interned` keeps), then text, and so
    on; a value without interned members is one piece. None as for `exact_json`.

    The pieces of two values compare, and hash, without copying the kept bytes: most
    of a request body, which every request of a suite sends alike.
    """
    if type(value) is not dict or not _EXACT:
        return _whole(value)
    parts: list[bytes] = []
    text, comma = b"{", b""
    run: dict[str, Any] = {}
    for key, member in value.items():
        known = _EXACT.get(id(member))
        if known is None or known[0] is not member:
            run[key] = member
            continue
        if type(key) is not str:
            return _whole(value)
        if run:
            written = _members(run)
            if written is None:
                return None
            text, comma, run = text + comma + written, b",", {}
        parts.append(text + comma + orjson.dumps(key) + b":")
        parts.append(known[1])
        text, comma = b"", b","
    if not parts:
        return _whole(value)
    if run:
        written = _members(run)
        if written is None:
            return None
        text += comma + written
    parts.append(text + b"}")
    return parts


def _whole(value: Any) -> list[bytes] | None:
    """`exact_json(value)` as one piece."""
    exact = exact_json(value)
    return None if exact is None else [exact]


def _members(run: dict[str, Any]) -> bytes | None:
    """The members of `run` as an object writes them, without its braces."""
    written = exact_json(run)
    return None if written is None else written[1:-1]


def exactly_same(left: Any, right: Any) -> bool:
    """Whether `left` and `right` have the same `exact_json` bytes and are equal (no NaN
    hides behind a `null`); False also when either is not plain JSON data.

    `==` first, at C speed: it passes over a member both sides hold as one object (an
    interned tool list) by identity. It confuses `true`, `1` and `1.0` and ignores key
    order, so the keys and the members but those held as one interned object or boolean
    are then written, each side's in one call; given `==`, equal bytes hide no NaN (a
    NaN equals only itself).
    """
    if left != right:
        return False
    if type(left) is not dict or type(right) is not dict:
        mine: Any = left
        theirs: Any = right
    else:
        mine, theirs = [list(left)], [list(right)]
        for key, member in left.items():
            other = right[key]
            if member is other and (member is True or member is False or _kept(member)):
                continue  # written alike, and writable
            mine.append(member)
            theirs.append(other)
    try:
        return orjson.dumps(mine, option=_PLAIN) == orjson.dumps(theirs, option=_PLAIN)
    except TypeError:
        return False


def _kept(value: Any) -> bool:
    """Whether `value` is interned (so plain JSON data, its bytes known)."""
    known = _EXACT.get(id(value))
    return known is not None and known[0] is value
