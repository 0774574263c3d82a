"""The `fcreplay` fixture's object: clients for the code under test, and what a test can assert.

A test hands `fcreplay.httpx_client()` (or `async_httpx_client()`) to its SDK
client; every request then goes through the test's cassette under the session's
record mode. Afterwards it asserts on what its code did:

- `decisions`: the normalized Decision (or ProviderError) of every model exchange;
- `expect(expect, index=-1)`: a suite `expect` object (the JSONL dict) judged by
  the suite's validator against one decision;
- `assert_tools(contract)`: the tools every request declared, schema-diffed
  against the canonical contract; blocking classes fail;
- `assert_history(max_steps=None)`: the tool-loop rules on every request's history;
- `assert_golden()`: the decisions against `golden/pytest/<module>.json`.

Each failure raises AssertionError with one readable line per problem; what was
found also goes into the test's run-log records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fcreplay.cassettes.interactions import Interaction
from fcreplay.clients.flavor import library
from fcreplay.decision import Decision, ProviderError
from fcreplay.finding import Finding
from fcreplay.inputs.contract import Contract, load_contract
from fcreplay.plugin.naming import TestName
from fcreplay.record import AttemptRecord
from fcreplay.traffic.judging import (
    ModelExchange,
    history_problems,
    model_exchanges,
    tool_drifts,
)
from fcreplay.traffic.player import TrafficPlayer
from fcreplay.traffic.records import Conversation, exchange_records

if TYPE_CHECKING:
    from fcreplay.inputs.cases import Expectation

ContractLike = Contract | str | Path


class Fcreplay:
    """What the `fcreplay` fixture gives a test (see the module doc)."""

    def __init__(
        self,
        player: TrafficPlayer,
        test: TestName,
        *,
        run_id: str,
        contract: ContractLike | None = None,
        golden: Any = None,
    ) -> None:
        self.player = player
        """The test's cassette and record mode."""
        self.test = test
        self._run_id = run_id
        self._contract = _contract(contract) if contract is not None else None
        self._golden = golden
        self._findings: dict[int, list[Finding]] = {}
        self._expectations: dict[int, Expectation] = {}
        self._max_steps = 0
        self._seen: tuple[int, list[ModelExchange]] = (-1, [])

    # --- clients ---------------------------------------------------------------------

    def httpx_client(self, *, flavor: str | None = None, **kwargs: Any) -> Any:
        """A real `httpx2.Client` (httpx2 installed) or `httpx.Client` whose transport
        replays or records; `flavor` forces one; kwargs go to the client."""
        return library(flavor).client(self.player, **kwargs)

    def async_httpx_client(self, *, flavor: str | None = None, **kwargs: Any) -> Any:
        """The same as an `AsyncClient`, for `AsyncOpenAI`, `AsyncAnthropic`, google-genai."""
        return library(flavor).async_client(self.player, **kwargs)

    # --- what happened ---------------------------------------------------------------

    @property
    def cassette(self) -> Path:
        """The test's cassette file."""
        return self.player.path

    @property
    def interactions(self) -> list[Interaction]:
        """Every HTTP exchange of the test so far (model calls and any other)."""
        return list(self.player.exchanges)

    @property
    def exchanges(self) -> list[ModelExchange]:
        """The model requests so far in the order sent, each with its normalized outcome
        (None for one replay could not answer)."""
        count = len(self.player.timeline)
        if self._seen[0] != count:
            self._seen = (count, model_exchanges(self.player.timeline, self.player.body_texts))
        return self._seen[1]

    @property
    def decisions(self) -> list[Decision | ProviderError]:
        """The normalized Decision of every model exchange (a ProviderError for an error)."""
        return [e.outcome for e in self.exchanges if e.outcome is not None]

    def miss_report(self) -> str:
        """Why requests found no recording: each miss, and what the requests sent breaks
        (tools against the marker's contract, tool-loop history), so drift is explained."""
        misses = self.player.misses
        lines = [f"fcreplay: {len(misses)} request(s) had no recorded answer in {self.cassette}:"]
        lines += [miss.message for miss in misses[:3]]
        sent = [exchange for exchange in self.exchanges if exchange.miss is not None]
        if self._contract is not None and sent:
            drifts = tool_drifts(sent, self._contract)
            lines += [f"  tools: {drift.line}" for drift in drifts if drift.blocking]
        lines += [f"  history: {problem.line}" for problem in history_problems(sent)]
        lines.append(
            "record with `pytest --fcreplay-record-mode=once` (new cassette) or "
            "`--fcreplay-record-mode=new_episodes` (add to it)"
        )
        return "\n".join(lines)

    # --- assertions ------------------------------------------------------------------

    def expect(
        self,
        expect: dict[str, Any] | Expectation,
        index: int = -1,
        *,
        contract: ContractLike | None = None,
    ) -> None:
        """Judge decision `index` against a suite expectation; findings fail with codes."""
        __tracebackhide__ = True
        # What only assertions need loads when one is made: a replaying test skips it.
        from fcreplay.inputs.cases import parse_expectation
        from fcreplay.judge.expectations import judge_expectation

        chosen = self._need_contract(contract, "expect")
        exchange = self._exchange(index)
        try:
            expectation = parse_expectation(expect, chosen)
        except ValueError as exc:
            raise AssertionError(f"fcreplay.expect: {exc}") from None
        self._expectations[exchange.index] = expectation
        decision = exchange.outcome
        if not isinstance(decision, Decision):
            error = f"{decision.status} {decision.message}" if decision else "no answer"
            raise AssertionError(f"fcreplay.expect: {exchange.label} got no decision: {error}")
        found = judge_expectation(decision, expectation, chosen)
        self._add(exchange.index, found)
        if found:
            lines = [f"{f.code} at {f.path or '/'}: {f.message}" for f in found]
            raise AssertionError(_report(f"{exchange.label} does not meet the expectation", lines))

    def assert_tools(
        self,
        contract: ContractLike | None = None,
        *,
        allow: Iterable[str] = (),
        tools: Sequence[str] | None = None,
    ) -> None:
        """Schema-diff the tools of every request with the contract; blocking classes fail.

        `allow` lists classes that do not fail (as `fcreplay schema-diff --allow`);
        `tools` the names each request must declare (default: every contract tool).
        """
        __tracebackhide__ = True
        chosen = self._need_contract(contract, "assert_tools")
        exchanges = self.exchanges
        if not exchanges:
            raise AssertionError("fcreplay.assert_tools: the test made no model requests")
        drifts = [d for d in tool_drifts(exchanges, chosen, allow=allow, tools=tools) if d.blocking]
        for drift in drifts:
            message = f"{drift.kind}: {drift.pointer}"
            self._add(
                drift.exchange.index,
                [Finding("tool_drift", drift.pointer, drift.contract, drift.sent, message)],
            )
        if drifts:
            raise AssertionError(
                _report(
                    "the tools sent differ from the contract",
                    [drift.line for drift in drifts],
                )
            )

    def assert_history(self, *, max_steps: int | None = None) -> None:
        """Check every request's history against the tool-loop rules of its wire format."""
        __tracebackhide__ = True
        from fcreplay.judge.history import history_finding

        if max_steps is not None:
            self._max_steps = max_steps
        problems = history_problems(self.exchanges, max_steps=max_steps)
        for problem in problems:
            self._add(problem.exchange.index, [history_finding(problem.problem)])
        if problems:
            raise AssertionError(
                _report("the tool-loop history is broken", [problem.line for problem in problems])
            )

    def assert_golden(self) -> None:
        """Compare the test's decision signatures with its golden entries (update with
        `--fcreplay-update`); a missing or changed entry fails."""
        __tracebackhide__ = True
        if self._golden is None:
            raise AssertionError("fcreplay.assert_golden: no golden store in this session")
        self._golden.check(self.test, self.records())

    # --- records ---------------------------------------------------------------------

    def records(self, elapsed_ms: int = 0) -> list[AttemptRecord]:
        """The run-log records of the test's model exchanges, findings so far included."""
        conversation = Conversation(
            run_id=self._run_id,
            target=self.test.target,
            case_id=self.test.name,
            test=self.test.nodeid,
            contract=self._contract,
            max_steps=self._max_steps,
        )
        return exchange_records(
            conversation,
            self.exchanges,
            findings=self._findings,
            expectations=self._expectations,
            elapsed_ms=elapsed_ms,
        )

    def _add(self, index: int, found: Iterable[Finding]) -> None:
        self._findings.setdefault(index, []).extend(found)

    def _exchange(self, index: int) -> ModelExchange:
        exchanges = self.exchanges
        try:
            return exchanges[index]
        except IndexError:
            raise AssertionError(
                f"fcreplay: no model exchange {index}; the test made {len(exchanges)}"
            ) from None

    def _need_contract(self, contract: ContractLike | None, what: str) -> Contract:
        if contract is not None:
            return _contract(contract)
        if self._contract is None:
            raise AssertionError(
                f"fcreplay.{what} needs a contract: pass one, or mark the test "
                '@pytest.mark.fcreplay(contract="contracts/tools.json")'
            )
        return self._contract


def _contract(value: ContractLike) -> Contract:
    return value if isinstance(value, Contract) else load_contract(value)


def _report(head: str, lines: Sequence[str]) -> str:
    return "\n".join([f"fcreplay: {head}:", *(f"  {line}" for line in lines)])
