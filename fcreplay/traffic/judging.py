"""Judging recorded client traffic: decisions, tools sent against the contract, tool-loop history.

- `model_exchanges(interactions)`: every interaction whose URL a registered adapter
  speaks (`api_for_url`), with the normalized Decision (or ProviderError) its
  response gives; other traffic (a model list, an upload) is left out.
- `tool_drifts(exchanges, contract)`: the tools each request declared, read back
  with its adapter (`sent_tools`) and diffed against the canonical contract with
  the suite's schema-diff classes (`schemadiff`); `blocking` is everything that
  is neither lossless nor in `allow`. Requests that declare no tools are skipped.
- `history_problems(exchanges)`: each request's conversation checked against
  the tool-loop rules (`judge.history`) through its adapter's optional
  `read_history`; a format without one is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from fcreplay.adapters.protocol import ReadBackAdapter
from fcreplay.adapters.registry import api_for_url, get_adapter
from fcreplay.cassettes.inspection import is_stream, parse_response
from fcreplay.cassettes.interactions import Interaction
from fcreplay.decision import Decision, ProviderError
from fcreplay.inputs.contract import Contract
from fcreplay.neutral import WireResponse
from fcreplay.traffic.matching import Miss, show
from fcreplay.traffic.wire import path_of

if TYPE_CHECKING:
    from fcreplay.judge.history import HistoryProblem


@dataclass(frozen=True)
class ModelExchange:
    """One model request and its answer, normalized."""

    index: int
    """Position among the model exchanges judged together (0-based)."""
    api: str
    """The adapter that speaks its wire format."""
    interaction: Interaction
    outcome: Decision | ProviderError | None
    """None for a request that got no recorded answer (see `miss`)."""
    miss: Miss | None = None
    """Why a request got no answer; None when it got one."""
    body_text: str | None = None
    """The request body's sorted JSON (`canonical.sorted_json`) when matching already took
    it; the record's digest is taken of it instead of serializing the body again."""

    @property
    def decision(self) -> Decision | None:
        """The decision, or None when the provider answered with an error."""
        return self.outcome if isinstance(self.outcome, Decision) else None

    @property
    def request_body(self) -> Any:
        """The request's body as sent (credentials were never part of it)."""
        return self.interaction.request.body

    @property
    def stream(self) -> bool:
        """Whether the request asked for a stream or the answer came as one."""
        return is_stream(self.interaction)

    @property
    def label(self) -> str:
        """`exchange N (POST /path)`: how messages name it."""
        request = self.interaction.request
        unanswered = ", no recorded answer" if self.miss is not None else ""
        return f"exchange {self.index} ({request.method} {path_of(request.uri)}{unanswered})"


def model_exchanges(
    items: Iterable[Interaction | Miss], body_texts: Mapping[int, str] | None = None
) -> list[ModelExchange]:
    """The model exchanges among `items` (in the order sent), each with its normalized
    outcome; a Miss (a request replay could not answer) is one with outcome None.
    `body_texts` gives the request bodies' sorted JSON already taken, by position."""
    found: list[ModelExchange] = []
    texts = body_texts or {}
    for position, item in enumerate(items):
        request = item.request
        api = api_for_url(request.uri)
        if api is None:
            continue
        if isinstance(item, Miss):
            unanswered = Interaction(request, WireResponse(0))
            found.append(ModelExchange(len(found), api, unanswered, None, item))
        else:
            outcome = parse_response(api, item)
            text = texts.get(position)
            found.append(ModelExchange(len(found), api, item, outcome, body_text=text))
    return found


_READS_BACK: dict[str, tuple[object, bool]] = {}
"""Whether each adapter, by name, is a ReadBackAdapter: a runtime-checkable Protocol looks
at every member on each `isinstance`, and every record asks."""


def reads_back(name: str, adapter: object) -> bool:
    """`isinstance(adapter, ReadBackAdapter)` for the adapter registered as `name`."""
    known = _READS_BACK.get(name)
    if known is None or known[0] is not adapter:
        known = _READS_BACK[name] = (adapter, isinstance(adapter, ReadBackAdapter))
    return known[1]


@dataclass(frozen=True)
class ToolDrift:
    """One difference between a tool a request declared and the contract's."""

    exchange: ModelExchange
    tool: str | None
    pointer: str
    """`/<tool>/parameters/...`, as `fcreplay schema-diff` names places."""
    kind: str
    """One of the schema-diff classes (`lossless`, `constraint_lost`, `semantic_change`, ...)."""
    contract: Any
    sent: Any
    blocking: bool

    @property
    def line(self) -> str:
        """One readable line: where, which tool, which class, the two values."""
        tool = f" tool {self.tool}:" if self.tool else ""
        return (
            f"{self.exchange.label}:{tool} {self.pointer or '/'}: {self.kind}: contract "
            f"{show(self.contract)}, sent {show(self.sent)}"
        )


def tool_drifts(
    exchanges: Sequence[ModelExchange],
    contract: Contract,
    *,
    allow: Iterable[str] = (),
    tools: Sequence[str] | None = None,
) -> list[ToolDrift]:
    """Diff every request's declared tools with `contract` (`tools`: the names each request
    must declare, in order; default every contract tool). ValueError for an unknown class."""
    # Loaded when tools are judged: replaying a test needs none of it.
    from fcreplay.schemadiff.classes import ALLOWABLE
    from fcreplay.schemadiff.tool_settings import declaration_differences

    allowed = set(allow)
    unknown = sorted(allowed - set(ALLOWABLE) - {"lossless"})
    if unknown:
        raise ValueError(f"unknown class {unknown[0]!r} (known: {', '.join(ALLOWABLE)})")
    expected = tuple(tools) if tools is not None else tuple(tool.name for tool in contract.tools)
    missing = [name for name in expected if name not in contract.by_name]
    if missing:
        raise ValueError(f"tool {missing[0]!r} is not in the contract")
    found: list[ToolDrift] = []
    for exchange in exchanges:
        found_adapter = get_adapter(exchange.api)
        if not reads_back(exchange.api, found_adapter):
            continue  # an adapter without read-back cannot say what was declared
        adapter = cast(ReadBackAdapter, found_adapter)
        specs = adapter.sent_tools(exchange.request_body)
        if not specs:
            continue
        for drift in declaration_differences(contract, adapter, False, expected, specs):
            found.append(
                ToolDrift(
                    exchange,
                    drift.tool,
                    drift.pointer,
                    drift.kind,
                    drift.contract,
                    drift.sent,
                    blocking=drift.kind != "lossless" and drift.kind not in allowed,
                )
            )
    return found


@dataclass(frozen=True)
class LoopProblem:
    """A broken tool-loop rule in one request's history."""

    exchange: ModelExchange
    problem: HistoryProblem

    @property
    def line(self) -> str:
        """One readable line: which request, which rule, what is wrong."""
        return f"{self.exchange.label}: {self.problem.rule}: {self.problem.message}"


def history_problems(
    exchanges: Sequence[ModelExchange], *, max_steps: int | None = None
) -> list[LoopProblem]:
    """Every tool-loop problem in the requests' histories, in exchange order."""
    from fcreplay.judge.history import check_history, history_of

    found: list[LoopProblem] = []
    for exchange in exchanges:
        history = history_of(get_adapter(exchange.api), exchange.request_body)
        if history is not None:
            problems = check_history(history, max_steps=max_steps)
            found += [LoopProblem(exchange, problem) for problem in problems]
    return found
