"""Values a cassette stores once: each distinct tool list, referred to by the bodies that sent it.

Every request of a unit sends the same tool list; written out in each body it was
most of a cassette. Since cassette format 2 the value of a `tools` member, at the
top of a JSON body or one object down (`toolConfig.tools`), stands once in the
cassette's top-level `shared` block under a name made from its content,
`tools-<first 12 hex digits of the SHA-256 of its compact JSON>`, and the body holds
`{"$fcreplay_shared": "<name>"}` in its place. Reading puts the value back (one
object for every body that refers to it), so every reader sees the bodies exactly
as sent: replay matching, request hashes, schema diff, inspect.

A reference cannot be mistaken for recorded content: at those places the writer
replaces every object (and every non-empty array), so in a format-2 body an object
there is always a reference; an array or scalar there is the value itself (a tool
list put back by hand stays readable). Only request bodies, response bodies and
the data of stream events are looked into, never bodies kept as text.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.errors import InputError

SHARED = "shared"
"""The top-level member of a cassette that holds the shared values by name."""
REFERENCE = "$fcreplay_shared"
"""The one key of a reference object; `$` keeps it apart from any wire format's names."""
MEMBER = "tools"
"""The body member whose value is shared."""
_HASH_DIGITS = 12


class SharedValueError(Exception):
    """A reference that names no shared value, or a `shared` block that is not an object."""

    def __init__(self, message: str, name: str | None = None, ordinal: int | None = None) -> None:
        super().__init__(message)
        self.name = name
        """The name referred to, when the reference has one."""
        self.ordinal = ordinal
        """Which reference of the file (0-based, in file order) is at fault."""


# --- writing ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Shared:
    """One value pulled out of a body: its name and the value itself."""

    name: str
    value: Any
    compact: str
    """The value's compact JSON, which its name is the hash of."""


def share(item: dict[str, Any], found: list[Shared]) -> dict[str, Any]:
    """An interaction in fcreplay's layout with its shareable values replaced by
    references (appended to `found`); the bodies it was given are not changed."""
    request = item.get("request")
    if isinstance(request, dict) and isinstance(request.get("parsed_body"), dict):
        item = {
            **item,
            "request": {**request, "parsed_body": _shared(request["parsed_body"], found)},
        }
    response = item.get("response")
    if isinstance(response, dict):
        if isinstance(response.get("parsed_body"), dict):
            body = _shared(response["parsed_body"], found)
            item = {**item, "response": {**response, "parsed_body": body}}
        elif isinstance(response.get("sse"), list):
            events = [_shared_event(event, found) for event in response["sse"]]
            item = {**item, "response": {**response, "sse": events}}
    return item


def _shared_event(event: Any, found: list[Shared]) -> Any:
    if isinstance(event, dict) and isinstance(event.get("data"), dict):
        return {**event, "data": _shared(event["data"], found)}
    return event


def _shared(body: dict[str, Any], found: list[Shared]) -> dict[str, Any]:
    copy: dict[str, Any] | None = None
    if _shareable(body.get(MEMBER)):
        copy = {**body, MEMBER: _reference(body[MEMBER], found)}
    for key, member in body.items():
        if key != MEMBER and isinstance(member, dict) and _shareable(member.get(MEMBER)):
            copy = dict(body) if copy is None else copy
            copy[key] = {**member, MEMBER: _reference(member[MEMBER], found)}
    return body if copy is None else copy


def _shareable(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and bool(value))


def _reference(value: Any, found: list[Shared]) -> dict[str, str]:
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    name = shared_name(compact)
    found.append(Shared(name, value, compact))
    return {REFERENCE: name}


def shared_name(compact: str) -> str:
    """The name a value is stored under: `tools-` and a hash of its compact JSON (key
    order and number spelling included: one name never stands for two texts)."""
    return f"{MEMBER}-{hashlib.sha256(compact.encode()).hexdigest()[:_HASH_DIGITS]}"


# --- reading ---------------------------------------------------------------------------


def read_split(raw: bytes, max_depth: int) -> tuple[Any, int | None] | None:
    """The document of a format-2 cassette laid out as fcreplay writes it, its `shared`
    block parsed once per distinct text (every cassette of a target holds the same),
    and how many members named `tools` the rest holds (`strictjson.loads_keyed`: None
    when not counted); None when the text is laid out otherwise or is not plain valid
    JSON: read it whole.

    The block is cut out at the newlines around it (a newline is never inside a JSON
    string) and `null` put in its place; the rest parses with `shared` as its one
    top-level key holding that `null` (the word occurs once in the rest) only where the
    cut was exactly the block's value, which then parses on its own, one level less deep.
    """
    start = raw.find(_SPLIT_START)
    if start < 0:
        return None
    start += len(_SPLIT_START)
    end, table = _known_table(raw, start)
    if end < 0:
        end = raw.find(_SPLIT_END, start)
        if end < 0:
            return None
    view = memoryview(raw)
    rest = b"".join((view[:start], b"null", view[end:]))
    if rest.count(b'"shared"') != 1:
        return None
    try:
        document, named = strictjson.loads_keyed(rest, MEMBER, max_depth=max_depth)
        if table is None:
            text = raw[start:end]
            table = strictjson.loads(text, max_depth=max_depth - 1)
            if type(table) is not dict:
                return None
            table = {name: strictjson.interned(value) for name, value in table.items()}
            _keep_table(text, table)
    except ValueError:
        return None
    if type(document) is not dict or SHARED not in document or document[SHARED] is not None:
        return None
    document[SHARED] = dict(table)  # a copy: `expand` writes into the block it is given
    return document, named


_SPLIT_START = b'\n "shared": '
_SPLIT_END = b',\n "interactions": '
_TABLES: dict[bytes, list[tuple[bytes, dict[str, Any]]]] = {}
"""Parsed `shared` blocks with their text, by the text's first bytes (which hold the
first value's name, made from its content)."""
_OPENING = 40


def _known_table(raw: bytes, start: int) -> tuple[int, dict[str, Any] | None]:
    """Where the block starting at `start` ends and its parsed table, when its text is one
    parsed before; else (-1, None). A known text followed by the block's end is the whole
    block: the end found first in the earlier file would be found first here too."""
    for text, table in _TABLES.get(raw[start : start + _OPENING], ()):
        if raw.startswith(text, start) and raw.startswith(_SPLIT_END, start + len(text)):
            return start + len(text), table
    return -1, None


def _keep_table(text: bytes, table: dict[str, Any]) -> None:
    if sum(map(len, _TABLES.values())) >= 256:
        _TABLES.clear()
    _TABLES.setdefault(text[:_OPENING], []).append((text, table))


def expand_cassette(
    path: str | Path,
    document: dict[str, Any],
    items: list[Any],
    max_bytes: int,
    size: int,
    named: int | None = None,
) -> None:
    """`expand` for the cassette file at `path` (`size` bytes): InputError (FILE:LINE) for
    a bad reference, or when the references would make the cassette read past `max_bytes`
    in full (a small file that refers to one large value a million times). `named` as
    for `expand`."""
    try:
        counts = expand(document, items, named)
    except SharedValueError as exc:
        raise InputError.at(path, error_line(_text(path), exc), str(exc)) from None
    if not counts:
        return
    # No shared value is longer than the file: measure them only when that bound fails.
    if size * (1 + sum(counts.values())) <= max_bytes:
        return
    table = document[SHARED]
    expanded = sum(
        len(json.dumps(table[name], ensure_ascii=False)) * n for name, n in counts.items()
    )
    if size + expanded > max_bytes:
        raise InputError.at(
            path,
            None,
            f"with its shared values put back, the cassette is larger than {max_bytes} "
            "bytes (the max_cassette_bytes limit; a reference bomb?); split it, or raise "
            "max_cassette_bytes only if the cassette is trusted",
        )


def _text(path: str | Path) -> str:
    # Read again only to word an error: a well-formed cassette is parsed once.
    try:
        return Path(path).read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return ""


def expand(document: dict[str, Any], items: list[Any], named: int | None = None) -> dict[str, int]:
    """Put the shared values of a format-2 cassette back into its bodies, in place; return
    how many references name each value (a reader bounds the cassette as it reads in full).

    `named`, when known, is no fewer than the members named `tools` anywhere in the
    document but its `shared` block (`items` being part of it).

    Raises SharedValueError for a reference to a value the `shared` block lacks, or
    one that is not `{"$fcreplay_shared": NAME}`.
    """
    table = document.get(SHARED, {})
    if not isinstance(table, dict):
        raise SharedValueError(f"the {SHARED!r} block must be an object of named values")
    expander = _Expander(table)
    if named is not None and _expand_tops(expander, items, named):
        return expander.counts
    put = expander.body
    for index, item in enumerate(items):
        if type(item) is not dict:
            continue
        request, response = item.get("request"), item.get("response")
        if type(request) is dict and type(body := request.get("parsed_body")) is dict:
            put(body, index, "request body")
        if type(response) is not dict:
            continue
        if type(body := response.get("parsed_body")) is dict:
            put(body, index, "response body")
        elif type(events := response.get("sse")) is list:
            for number, event in enumerate(events):
                # The hot loop of reading a stream: an event's data is handed on only
                # when it may hold a reference (a `tools` object at the top or one down).
                if type(event) is dict and type(data := event.get("data")) is dict:
                    if MEMBER in data:
                        put(data, index, "stream event", number)
                        continue
                    for member in data.values():
                        if type(member) is dict and MEMBER in member:
                            put(data, index, "stream event", number)
                            break
    return expander.counts


def _expand_tops(expander: _Expander, items: list[Any], named: int) -> bool:
    """`expand`'s walk when every member named `tools` of the document is one at the top
    of a request body (as fcreplay writes them: the walk would find no other); False,
    with nothing changed, when there are others (or may be)."""
    tops = []
    for index, item in enumerate(items):
        if (
            type(item) is dict
            and type(request := item.get("request")) is dict
            and type(body := request.get("parsed_body")) is dict
            and MEMBER in body
        ):
            tops.append((index, body))
    if len(tops) != named:
        return False
    for index, body in tops:
        if type(reference := body[MEMBER]) is dict:
            body[MEMBER] = expander.value(reference, index, "request body", -1, None)
    return True


class _Expander:
    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table
        self.counts: dict[str, int] = {}
        self.references = 0

    def body(self, body: dict[str, Any], index: int, where: str, number: int = -1) -> None:
        # The hot loop of reading a cassette: one pass over each body's top members.
        if type(body.get(MEMBER)) is dict:
            body[MEMBER] = self.value(body[MEMBER], index, where, number, None)
        for key, member in body.items():
            if type(member) is dict and type(member.get(MEMBER)) is dict and key != MEMBER:
                member[MEMBER] = self.value(member[MEMBER], index, where, number, key)

    def value(
        self, reference: dict[str, Any], index: int, where: str, number: int, key: str | None
    ) -> Any:
        ordinal = self.references
        self.references += 1
        name = reference.get(REFERENCE)
        if len(reference) == 1 and type(name) is str and name in self.table:
            count = self.counts.get(name, 0)
            if count == 0:
                # Cassettes of a suite share their tool lists with each other and with
                # the requests a replay builds: one object for all (read-only).
                self.table[name] = strictjson.interned(self.table[name])
            self.counts[name] = count + 1
            return self.table[name]
        where += f" {number}" if number >= 0 else ""
        place = f"interaction {index}: {where}: {'.'.join(filter(None, (key, MEMBER)))!r}"
        if set(reference) != {REFERENCE} or not isinstance(name, str):
            raise SharedValueError(
                f"{place} must be an array, or a reference {{{json.dumps(REFERENCE)}: NAME}} "
                f"to a value of the {SHARED!r} block; found an object with keys "
                f"{sorted(reference)}",
                None,
                ordinal,
            )
        raise SharedValueError(
            f"{place} refers to shared value {name!r}, which the {SHARED!r} block does "
            "not hold; re-record the cassette or restore the value",
            name,
            ordinal,
        )


_REFERENCE_KEY = re.compile(r'"\$fcreplay_shared"\s*:')
_SHARED_KEY = re.compile(r'^\s*"shared"\s*:', re.MULTILINE)
_INTERACTIONS_KEY = re.compile(r'^\s*"interactions"\s*:\s*\[', re.MULTILINE)


def error_line(text: str, error: SharedValueError) -> int | None:
    """The line of the cassette text that the error is about, when it can be found."""
    found: re.Match[str] | None = None
    if error.ordinal is None:
        found = _SHARED_KEY.search(text)
    elif error.name is not None:
        quoted = re.escape(json.dumps(error.name, ensure_ascii=False))
        found = re.search(_REFERENCE_KEY.pattern + r"\s*" + quoted, text)
    else:
        start = _INTERACTIONS_KEY.search(text)
        references = _REFERENCE_KEY.finditer(text, start.end() if start else 0)
        for number, match in enumerate(references):
            if number == error.ordinal:
                found = match
                break
    return None if found is None else text.count("\n", 0, found.start()) + 1
