"""Cassettes on disk: read any recording (vcrpy, Ruby VCR, HAR), and fcreplay's own JSON format.

This is the only module that imports vcrpy. Everything it returns is an
fcreplay dataclass: bodies decoded (gzip, base64, `!!binary`), JSON parsed,
streams split into events, whatever style the recording project used. The
interaction dataclasses and their layouts live in `cassettes.interactions`, body
decoding in `cassettes.bodies`, the other recorders' formats in `cassettes.formats`;
their public names are re-exported here.

fcreplay's own format is JSON with bodies stored decoded and readable, each distinct
tool list once (`cassettes.shared`), laid out one field a line (`cassettes.layout`):

    {"version": 1,
     "fcreplay": {"format": 2, "target": ..., "adapter": ..., "variant": ...,
                  "case_id": ..., "fcreplay_version": ...},
     "shared": {"tools-<hash>": [...]},
     "interactions": [{"request": {..., "parsed_body": {..., "tools":
                                                        {"$fcreplay_shared": "tools-<hash>"}}},
                       "response": {..., "parsed_body" | "sse" | "body": ...}}]}

Format 1 (no `shared` block, tool lists in every body) is still read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import fcreplay.strictjson as strictjson
from fcreplay.atomic import write_text_atomically
from fcreplay.cassettes import layout, shared
from fcreplay.cassettes.bodies import BodyLimitError, stream_framing
from fcreplay.cassettes.bodies import is_json_array_stream as is_json_array_stream
from fcreplay.cassettes.capped import read_capped
from fcreplay.cassettes.formats import FORMATS, interaction_items
from fcreplay.cassettes.framing import encode as encode_events
from fcreplay.cassettes.interactions import Interaction as Interaction
from fcreplay.cassettes.interactions import RecordedRequest as RecordedRequest
from fcreplay.cassettes.interactions import UnreadableInteraction as UnreadableInteraction
from fcreplay.cassettes.interactions import interaction_json as interaction_json
from fcreplay.cassettes.interactions import read_interaction, read_own, status_phrase
from fcreplay.cassettes.layout import InteractionText as InteractionText
from fcreplay.cassettes.redaction import refuse_leaks, scrub_headers, scrub_url
from fcreplay.cassettes.sse import format_sse
from fcreplay.cassettes.yamlgraph import yaml_graph_problem
from fcreplay.errors import InputError
from fcreplay.fingerprint import Fingerprint
from fcreplay.limits import DEFAULT_LIMITS, Limits
from fcreplay.neutral import WireResponse
from fcreplay.quickinit import quick
from fcreplay.version import __version__

CASSETTE_VERSION = 1
"""vcrpy's cassette format version, which fcreplay cassettes also declare."""
FORMAT = 2
"""Version of the `fcreplay` block and of the body layout under it, as written: 2 stores
each distinct tool list once (`cassettes.shared`)."""
READ_FORMATS = (1, 2)
"""The formats read: 1 holds every tool list in full in every body."""
SERIALIZER_NAME = "fcreplay"
"""Name under which `SERIALIZER` is registered with vcrpy."""


@quick
@dataclass(frozen=True)
class CassetteMeta:
    """Where an fcreplay cassette comes from: which target, variant and case."""

    target: str
    adapter: str
    variant: str
    case_id: str
    fcreplay_version: str = __version__
    recorded_with: Fingerprint | None = None
    """What the requests were built from when recorded (older cassettes do not say)."""

    def to_json(self) -> dict[str, Any]:
        """Return the `fcreplay` block of the cassette."""
        block: dict[str, Any] = {
            "format": FORMAT,
            "target": self.target,
            "adapter": self.adapter,
            "variant": self.variant,
            "case_id": self.case_id,
            "fcreplay_version": self.fcreplay_version,
        }
        if self.recorded_with is not None:
            block["recorded_with"] = self.recorded_with.to_json()
        return block


@quick
@dataclass(frozen=True)
class Cassette:
    """A cassette as read: its interactions, and its fcreplay block when it has one."""

    path: Path
    meta: CassetteMeta | None
    """None for cassettes written by other tools."""
    interactions: list[Interaction | UnreadableInteraction]


# --- reading ---------------------------------------------------------------------------


def read_interactions(
    path: str | Path, limits: Limits = DEFAULT_LIMITS
) -> list[Interaction | UnreadableInteraction]:
    """Read the interactions of any vcrpy cassette (YAML or JSON), in file order.

    Raises InputError when the file cannot be opened or is not a cassette at all;
    a single interaction that cannot be decoded becomes an UnreadableInteraction.
    """
    return load_cassette(path, limits).interactions


def load_cassette(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> Cassette:
    """Read a cassette with its fcreplay block (see `read_interactions`), within `limits`:
    file size, nesting, YAML aliases and decoded body sizes; past any of them the whole
    file is an InputError saying which limit and how to raise it."""
    raw = read_capped(path, limits.max_cassette_bytes)
    return _cassette_of(path, raw or b"", limits)


def load_cassette_if_any(
    path: str | Path,
    limits: Limits = DEFAULT_LIMITS,
    *,
    on_link: Callable[[], object] | None = None,
) -> Cassette | None:
    """`load_cassette`, or None when there is no file at `path` (without a look first:
    replay opens thousands); `on_link` as for `read_capped`."""
    raw = read_capped(path, limits.max_cassette_bytes, missing_ok=True, on_link=on_link)
    return None if raw is None else _cassette_of(path, raw, limits)


def _cassette_of(path: str | Path, raw: bytes, limits: Limits) -> Cassette:
    document, named = _load_document(path, raw, limits)
    items = interaction_items(document)
    if items is None:
        raise InputError.at(path, None, f"not a cassette: it holds no {FORMATS} list")
    block = document.get("fcreplay") if isinstance(document, dict) else None
    own = block is not None
    meta = _read_meta(path, block) if own else None
    if isinstance(block, dict) and block.get("format") != 1:
        if items is not document.get("interactions"):
            named = None  # items made from the document (HAR): counted in another shape
        shared.expand_cassette(path, document, items, limits.max_cassette_bytes, len(raw), named)
    interactions = []
    for index, item in enumerate(items):
        try:
            interactions.append(
                read_own(index, item, limits)
                if own
                else read_interaction(index, item, own=False, limits=limits)
            )
        except BodyLimitError as exc:
            raise InputError.at(path, None, f"interaction {index}: {exc}") from None
    # The caller's Path itself: it wrote itself out as a string once already (to be opened).
    return Cassette(path if isinstance(path, Path) else Path(path), meta, interactions)


def _load_document(path: str | Path, raw: bytes, limits: Limits) -> tuple[Any, int | None]:
    """The document, and no fewer than the members named `shared.MEMBER` it holds but
    for its `shared` block, when counted (`strictjson.loads_keyed`), else None."""
    if raw[:1] == b"{":
        # fcreplay's own cassettes, parsed from the bytes; anything amiss is read
        # again below, which words the problem.
        try:
            split = shared.read_split(raw, depth := limits.max_json_depth)
            if split is None:
                return strictjson.loads_keyed(raw, shared.MEMBER, max_depth=depth)
            return split
        except ValueError:
            pass
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError.at(path, None, f"not a text cassette (not UTF-8: {exc.reason})") from None
    if text.lstrip()[:1] not in ("{", "["):
        return _load_yaml(path, text, limits), None
    try:
        return strictjson.loads(text, max_depth=limits.max_json_depth), None
    except strictjson.JSONLimitError as exc:
        raise InputError.at(path, exc.lineno, f"not a readable cassette: {exc.msg}") from None
    except json.JSONDecodeError as exc:
        json_error = exc
    try:
        return _load_yaml(path, text, limits), None  # flow-style YAML also starts with a brace
    except InputError:
        message = f"not a readable cassette: invalid JSON: {json_error.msg}"
        raise InputError.at(path, json_error.lineno, message) from None


def _load_yaml(path: str | Path, text: str, limits: Limits) -> Any:
    # vcrpy's own loader: safe, but it also rebuilds the benign Python tags that
    # old cassettes hold (tuples, BytesIO request bodies). The node graph is checked
    # before anything is built: aliases share nodes, so a small file can stand for
    # an exponential document (an alias bomb).
    import yaml
    from vcr.serializers import yamlserializer

    loader = yamlserializer._CassetteLoader(text)
    try:
        node = loader.get_single_node()
        problem = yaml_graph_problem(node, limits) if node is not None else None
        if problem is not None:
            raise InputError.at(path, node.start_mark.line + 1 if node else None, problem)
        document = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "malformed YAML"
        raise InputError.at(path, line, f"not a readable cassette: {problem}") from None
    except yaml.YAMLError as exc:
        raise InputError.at(path, None, f"not a readable cassette: {exc}") from None
    finally:
        loader.dispose()
    if strictjson.check_value(document, limits.max_json_depth) is not None:
        raise InputError.at(
            path, None, "not a readable cassette: it holds a non-finite number (.inf or .nan)"
        )
    return document


def _read_meta(path: str | Path, block: Any) -> CassetteMeta:
    if not isinstance(block, dict):
        raise InputError.at(path, None, "the 'fcreplay' block must be an object")
    form = block.get("format")
    if form not in READ_FORMATS or isinstance(form, bool):
        raise InputError.at(
            path,
            None,
            f"fcreplay cassette format {form!r}; this fcreplay reads formats "
            f"{' and '.join(map(str, READ_FORMATS))}: upgrade fcreplay or re-record the cassette",
        )
    get = block.get
    return CassetteMeta(
        target=str(get("target", "")),
        adapter=str(get("adapter", "")),
        variant=str(get("variant", "")),
        case_id=str(get("case_id", "")),
        fcreplay_version=str(get("fcreplay_version", "")),
        recorded_with=Fingerprint.from_json(get("recorded_with")),
    )


# --- writing ---------------------------------------------------------------------------


def write_cassette(
    path: str | Path,
    interactions: Iterable[Interaction],
    meta: CassetteMeta,
) -> Path:
    """Write interactions as an fcreplay cassette, atomically; return the path.

    Parent folders are created; see `write_text_atomically`.
    """
    target = Path(path)
    write_text_atomically(target, cassette_text(interactions, meta))
    return target


def cassette_text(interactions: Iterable[Interaction], meta: CassetteMeta) -> str:
    """The text `write_cassette` writes (`cassettes.layout`), non-ASCII kept readable.

    Raises ValueError for a value JSON cannot carry (NaN, infinity).
    """
    return assemble_cassette(meta, [interaction_text(i) for i in interactions])


def interaction_text(interaction: Interaction) -> InteractionText:
    """One interaction as it stands in a cassette's text, with the shared values it refers
    to; a recorder lays out each interaction once and reassembles the cassette from them."""
    return layout.interaction_text(interaction_json(interaction))


def assemble_cassette(meta: CassetteMeta, texts: Sequence[InteractionText]) -> str:
    """A whole cassette from its interactions' texts."""
    return layout.assemble({"version": CASSETTE_VERSION, "fcreplay": meta.to_json()}, texts)


# --- vcrpy serializer ------------------------------------------------------------------


class VcrSerializer:
    """Converts between fcreplay's cassette format and vcrpy's in-memory cassette dict.

    Register it to let vcrpy itself replay (or record) fcreplay cassettes:
    `vcr.VCR().register_serializer("fcreplay", SERIALIZER)`.
    """

    def __init__(self, meta: CassetteMeta | None = None) -> None:
        self.meta = meta
        """The fcreplay block written by `serialize`; a placeholder one when None."""

    def serialize(self, cassette_dict: dict[str, Any]) -> str:
        """vcrpy dict (string bodies) -> fcreplay cassette text, scrubbed as `fcreplay record`
        scrubs (credential headers and query keys out); SecretLeakError for a key left in."""
        interactions = []
        for index, item in enumerate(cassette_dict.get("interactions", [])):
            interaction = read_interaction(index, item, own=False)
            if isinstance(interaction, UnreadableInteraction):
                raise ValueError(f"cannot store interaction {index}: {interaction.reason}")
            interactions.append(_scrubbed(interaction))
        meta = self.meta or CassetteMeta(target="", adapter="", variant="", case_id="")
        text = cassette_text(interactions, meta)
        refuse_leaks(text, (), where="the cassette vcrpy is writing")
        return text

    def deserialize(self, cassette_string: str) -> dict[str, Any]:
        """fcreplay cassette text -> vcrpy dict (plain vcrpy JSON passes through)."""
        document = strictjson.loads(cassette_string)
        if not isinstance(document, dict):
            raise ValueError("not a cassette: the JSON document is not an object")
        if "fcreplay" not in document:
            return document
        block = document["fcreplay"]
        if isinstance(block, dict) and block.get("format") != 1:
            items = document.get("interactions")
            try:
                shared.expand(document, items if isinstance(items, list) else [])
            except shared.SharedValueError as exc:
                raise ValueError(f"cannot replay the cassette: {exc}") from None
        interactions = []
        for index, item in enumerate(document.get("interactions", [])):
            interaction = read_interaction(index, item, own=True)
            if isinstance(interaction, UnreadableInteraction):
                raise ValueError(f"cannot replay interaction {index}: {interaction.reason}")
            interactions.append(_vcr_interaction(interaction))
        return {"version": CASSETTE_VERSION, "interactions": interactions}


def _scrubbed(interaction: Interaction) -> Interaction:
    request, response = interaction.request, interaction.response
    return replace(
        interaction,
        request=replace(
            request, uri=scrub_url(request.uri), headers=scrub_headers(request.headers)
        ),
        response=replace(response, headers=scrub_headers(response.headers)),
    )


def _vcr_interaction(interaction: Interaction) -> dict[str, Any]:
    request, response = interaction.request, interaction.response
    return {
        "request": {
            "method": request.method,
            "uri": request.uri,
            "headers": {name: [value] for name, value in request.headers.items()},
            "body": _wire_text(request.body),
        },
        "response": {
            "status": {"code": response.status, "message": status_phrase(response.status)},
            "headers": {name: [value] for name, value in response.headers.items()},
            "body": {"string": _wire_text(_wire_body(request.uri, response)) or ""},
        },
    }


def _wire_body(uri: str, response: WireResponse) -> Any:
    if response.events is None:
        return response.body
    if is_json_array_stream(uri) and all(event.event is None for event in response.events):
        return [event.data for event in response.events]
    framing = stream_framing(uri)
    if framing is not None and framing != "sse":
        chunks = encode_events(framing, response.events)
        return b"".join(chunks) if framing == "aws-eventstream" else b"".join(chunks).decode()
    return format_sse(response.events)


def _wire_text(body: Any) -> str | bytes | None:
    if body is None or isinstance(body, str | bytes):
        return body
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


SERIALIZER = VcrSerializer()
"""The vcrpy serializer for fcreplay cassettes (placeholder fcreplay block on write)."""


def register_vcr_serializer(recorder: Any = None) -> None:
    """Register `SERIALIZER` as "fcreplay" with a vcrpy `VCR` (default: vcrpy's own, the one
    behind `vcr.use_cassette`), so `use_cassette(path, serializer="fcreplay")` reads and
    writes fcreplay cassettes."""
    if recorder is None:
        import vcr

        recorder = vcr.default_vcr
    recorder.register_serializer(SERIALIZER_NAME, SERIALIZER)
