"""The cassette of free client traffic: read from any recorder, written in fcreplay's format.

Reading takes any cassette `fcreplay inspect` reads (vcrpy YAML or JSON, or
fcreplay's own JSON). Writing is fcreplay's cassette format, the same file format
as suite cassettes (`cassettes.store.assemble_cassette`): each interaction labelled
with its position and the adapter that speaks it (`{"exchange": N, "api": NAME}`), streamed
responses kept event by event, written atomically, and refused (SecretLeakError,
nothing written) when the text would hold a credential the client sent or any
key-shaped string.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from fcreplay.adapters.registry import api_for_url
from fcreplay.atomic import write_text_atomically
from fcreplay.cassettes.interactions import Interaction, UnreadableInteraction
from fcreplay.cassettes.redaction import refuse_leaks
from fcreplay.cassettes.store import (
    CassetteMeta,
    assemble_cassette,
    interaction_text,
    load_cassette_if_any,
)
from fcreplay.errors import InputError
from fcreplay.strictjson import exact_json

TRAFFIC_VARIANT = "traffic"
"""The `variant` of a traffic cassette's fcreplay block (suite cassettes name theirs)."""
OTHER_API = "other"
"""The `api` label of an interaction no adapter speaks."""
WRITABLE_SUFFIX = ".json"


def traffic_meta(target: str, case_id: str) -> CassetteMeta:
    """The fcreplay block of a traffic cassette: who recorded it (`target`) and for what."""
    return CassetteMeta(target=target, adapter="", variant=TRAFFIC_VARIANT, case_id=case_id)


def load_traffic(path: Path) -> list[Interaction] | None:
    """The interactions of the cassette at `path`, in order; None when there is no file.

    Raises InputError when the file is not a cassette or an interaction cannot be
    decoded (replaying around a hole would answer the wrong requests).
    """
    cassette = load_cassette_if_any(path)
    if cassette is None:
        return None
    found = []
    for index, interaction in enumerate(cassette.interactions):
        if isinstance(interaction, UnreadableInteraction):
            raise InputError.at(path, None, f"interaction {index}: {interaction.reason}")
        _share_tools(interaction.request.body)
        found.append(interaction)
    return found


_TOOL_LISTS: dict[bytes, list[Any]] = {}
"""One tool list per distinct list of the cassettes read, by its exact bytes."""
_EXACT: dict[int, bytes] = {}
"""The exact bytes of each list in `_TOOL_LISTS`, by the list's identity."""
_MAX_TOOL_LISTS = 64


def _share_tools(body: Any) -> None:
    """Give a recorded request body the tool list an earlier cassette sent, when equal.

    Every test of a suite sends the same tools: kept once, a test's cassette adds only
    what is its own to the memory the garbage collector walks while the test runs (the
    parsed copy is freed at once). Recorded bodies are read, never changed.
    """
    if type(body) is not dict or type(tools := body.get("tools")) is not list or not tools:
        return
    if shared_exact(tools) is not None:
        return  # already the shared list (a format-2 cassette's table is read once)
    exact = exact_json(tools)
    if exact is None:
        return
    known = _TOOL_LISTS.get(exact)
    if known is None:
        if len(_TOOL_LISTS) >= _MAX_TOOL_LISTS:
            _TOOL_LISTS.clear()
            _EXACT.clear()
        _TOOL_LISTS[exact] = tools
        _EXACT[id(tools)] = exact
    # Equal bytes are equal values, unless a non-finite float was written as null.
    elif b"null" not in exact or known == tools:
        body["tools"] = known


def shared_exact(value: Any) -> bytes | None:
    """The exact bytes (`strictjson.exact_json`) of a tool list cassettes share, without
    writing it again; None for any other value."""
    exact = _EXACT.get(id(value))
    return exact if exact is not None and _TOOL_LISTS.get(exact) is value else None


def labelled(interactions: Iterable[Interaction]) -> list[Interaction]:
    """The interactions with their label set to their place and wire format."""
    return [
        replace(i, label={"exchange": n, "api": api_for_url(i.request.uri) or OTHER_API})
        for n, i in enumerate(interactions)
    ]


def traffic_text(meta: CassetteMeta, interactions: Sequence[Interaction]) -> str:
    """The cassette's text: fcreplay's format, interactions labelled in order."""
    return assemble_cassette(meta, [interaction_text(i) for i in labelled(interactions)])


def save_traffic(
    path: Path, meta: CassetteMeta, interactions: Sequence[Interaction], secrets: Iterable[str]
) -> None:
    """Write the cassette atomically; SecretLeakError (nothing written) if it holds a secret."""
    if path.suffix.lower() != WRITABLE_SUFFIX:
        raise InputError.at(
            path,
            None,
            "fcreplay writes JSON cassettes; record into a .json path (other cassettes "
            "are read, never rewritten)",
        )
    text = traffic_text(meta, interactions)
    refuse_leaks(text, secrets, where=f"cassette {path}")
    write_text_atomically(path, text)
