"""Mutated provider bodies and streams, from the example suite's recorded answers.

Shared by the fuzz tests (hypothesis draws the random choices) and by
`benchmarks/fuzz.py` (a seeded `random.Random` for the large run). Each mutation
starts from a real answer of one wire format and changes one to three places in
it: a value replaced by one of the odd values below, a key dropped, a container
wrapped or emptied, an argument string edited as text (NaN, infinity, truncation,
deep nesting). What follows parsing is exercised too: the decision's signature and
its canonical JSON, as a run log would write them.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcreplay.adapters.protocol import ServerAdapter
from fcreplay.adapters.registry import api_for_url, get_adapter
from fcreplay.canonical import canonical_json
from fcreplay.cassettes.store import Interaction, load_cassette
from fcreplay.decision import Decision, ProviderError, signature
from fcreplay.neutral import StreamEvent

ROOT = Path(__file__).resolve().parents[1]

ODD_VALUES: tuple[Any, ...] = (
    None,
    "",
    "x" * 300,
    0,
    -1,
    2**70,
    1e308,
    -0.0,
    True,
    [],
    {},
    [None],
    {"type": None},
    ["text"],
    {"": ""},
    [[[[[]]]]],
    "NaN",
    "{",
    "\u0000\ud800",
    {"type": ["tool_use"]},
    {"type": {"a": 1}},
)
ARGUMENT_TEXTS: tuple[str, ...] = (
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": -Infinity}',
    '{"a": 1e999}',
    '{"a": ' + "[" * 3000 + "]" * 3000 + "}",
    '{"a": ' + "[" * 70 + "]" * 70 + "}",
    '{"a": ' + "9" * 5000 + "}",
    '{"a": 1',
    "[]",
    "null",
    '"text"',
    "",
)


@dataclass(frozen=True)
class Sample:
    """One recorded answer of one adapter: a body, or the events of a stream."""

    api: str
    status: int
    body: Any
    events: tuple[StreamEvent, ...] | None


def samples() -> list[Sample]:
    """Every recorded answer of the example suite's cassettes, in a stable order, and each
    answer also in the other form (streamed or not) as its adapter renders it, so every
    adapter's stream parser is fuzzed even where the suite recorded no stream."""
    found = []
    for path in sorted((ROOT / "cassettes").rglob("*.json")):
        for interaction in load_cassette(path).interactions:
            if isinstance(interaction, Interaction):
                api = api_for_url(interaction.request.uri)
                response = interaction.response
                if api is None:
                    continue
                found.append(Sample(api, response.status, response.body, response.events))
                adapter = get_adapter(api)
                if not (200 <= response.status < 300 and isinstance(adapter, ServerAdapter)):
                    continue
                if response.events is None:
                    decision = adapter.parse_decision(response.status, response.body)
                else:
                    decision = adapter.parse_stream(response.status, list(response.events))
                if isinstance(decision, Decision):
                    other = adapter.render_response(decision, stream=response.events is None)
                    found.append(Sample(api, other.status, other.body, other.events))
    return found


def mutate(value: Any, rng: random.Random, times: int = 3) -> Any:
    """A deep copy of `value` with one to `times` places changed."""
    value = copy.deepcopy(value)
    for _ in range(rng.randint(1, times)):
        value = _mutate_once(value, rng)
    return value


STRUCTURAL = frozenset(
    {
        "type",
        "role",
        "index",
        "id",
        "name",
        "finish_reason",
        "stop_reason",
        "status",
        "finishReason",
        "content",
        "delta",
        "arguments",
        "input",
        "args",
        "code",
        "error",
    }
)
"""Keys the adapters branch on: mutated more often, since that is where parsers break."""


def _mutate_once(root: Any, rng: random.Random) -> Any:
    places = list(_places(root, None, None))
    structural = [place for place in places if place[1] in STRUCTURAL]
    parent, key, current = rng.choice(structural if structural and rng.random() < 0.5 else places)
    new = _changed(current, rng)
    if parent is None:
        return None if new is _DELETE else new
    if new is _DELETE:
        del parent[key]
    else:
        parent[key] = new
    return root


_DELETE = object()


def _changed(current: Any, rng: random.Random) -> Any:
    roll = rng.random()
    if isinstance(current, str) and roll < 0.35:
        return rng.choice(ARGUMENT_TEXTS) if rng.random() < 0.7 else current[: len(current) // 2]
    if roll < 0.65:
        return copy.deepcopy(rng.choice(ODD_VALUES))
    if roll < 0.8:
        return _DELETE
    if roll < 0.9:
        return [current]
    return {"value": current} if rng.random() < 0.5 else type(current)() if current else None


def _places(value: Any, parent: Any, key: Any) -> Iterator[tuple[Any, Any, Any]]:
    yield parent, key, value
    if isinstance(value, dict):
        for child in list(value):
            yield from _places(value[child], value, child)
    elif isinstance(value, list):
        for index in range(len(value)):
            yield from _places(value[index], value, index)


def mutated_events(events: tuple[StreamEvent, ...], rng: random.Random) -> list[StreamEvent]:
    """A stream with events dropped, repeated or reordered, and some data mutated."""
    kept = [event for event in events if rng.random() > 0.1]
    if kept and rng.random() < 0.3:
        kept.insert(rng.randrange(len(kept) + 1), rng.choice(kept))
    if len(kept) > 1 and rng.random() < 0.2:
        i, j = rng.randrange(len(kept)), rng.randrange(len(kept))
        kept[i], kept[j] = kept[j], kept[i]
    out = []
    for event in kept:
        data: Any = event.data
        if rng.random() < 0.3:
            data = mutate(data, rng)
            if rng.random() < 0.2:
                data = json.dumps(data, allow_nan=True)  # data left as text, as SSE carries it
        name = event.event if rng.random() > 0.05 else rng.choice(ODD_VALUES[:3])
        out.append(StreamEvent(name if isinstance(name, str) or name is None else None, data))
    return out


def exercise(sample: Sample, rng: random.Random) -> None:
    """Parse one mutation of `sample` and do what a run does next; raises on a bug."""
    adapter = get_adapter(sample.api)
    if sample.events is not None and rng.random() < 0.8:
        outcome = adapter.parse_stream(sample.status, mutated_events(sample.events, rng))
    else:
        body = sample.body if sample.body is not None else [e.data for e in sample.events or ()]
        body = mutate(body, rng)
        if rng.random() < 0.2:
            body = json.dumps(body, allow_nan=True)  # a body that came as text
        status = sample.status if rng.random() < 0.8 else rng.choice((400, 429, 500, 529, 0))
        outcome = adapter.parse_decision(status, body)
    if isinstance(outcome, Decision):
        signature(outcome)
        canonical_json(outcome.to_json())
    else:
        assert isinstance(outcome, ProviderError)
        canonical_json(outcome.to_json())
