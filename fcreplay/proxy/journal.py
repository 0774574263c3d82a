"""What the proxy tells: one line per exchange, and one run-log record per model exchange.

Records are the client-traffic records (`traffic.records`): `case_id` is the
cassette's name and `variant` the exchange's place among that cassette's model
exchanges in this run (`exchange-0`, ...). Calls are checked by `judge.free_calls`
against the tools the request declared (or `contract`, when given). A
request without a recorded answer is logged as an `error` record whose
`transport_error` says `missing_interaction`.
"""

from __future__ import annotations

import marshal
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from fcreplay.cassettes.inspection import parse_response
from fcreplay.cassettes.interactions import Interaction
from fcreplay.cassettes.redaction import KEY_SHAPED, refuse_leaks
from fcreplay.decision import Decision, ProviderError
from fcreplay.errors import SecretLeakError
from fcreplay.inputs.contract import Contract
from fcreplay.judge.free_calls import call_findings, declared_tools
from fcreplay.neutral import WireResponse
from fcreplay.proxy.service import Outcome
from fcreplay.record import AttemptRecord
from fcreplay.runlog import RunLogWriter, record_line
from fcreplay.runmarks import RunEnd
from fcreplay.traffic.judging import ModelExchange
from fcreplay.traffic.records import Conversation, exchange_records

HOWS = ("recorded", "replayed", "miss", "error")
_KNOWN_TOOL_LISTS = 64
"""Distinct declared tool lists whose contract is kept (a suite has a handful)."""


class ProxyJournal:
    """Prints and logs finished requests; thread-safe (one lock around the log and counts)."""

    def __init__(
        self,
        run_id: str,
        target: str,
        echo: Callable[[str], None] | None,
        writer: RunLogWriter | None,
        contract: Contract | None = None,
    ) -> None:
        self.run_id = run_id
        self.target = target
        self.contract = contract
        self._echo = echo
        self._writer = writer
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self._ordinals: Counter[str] = Counter()
        self._declared: dict[tuple[str, bytes], Contract] = {}
        self.records: list[AttemptRecord] = []
        """Every record written, in completion order."""
        self.refused: list[str] = []
        """Records not written because they would have held a credential."""

    @property
    def log_path(self) -> str | None:
        """Where the run log is written, if anywhere."""
        return None if self._writer is None else str(self._writer.path)

    def note(self, outcome: Outcome) -> None:
        """Count, print and log one finished request.

        A record that would hold a credential (a key pasted into a prompt, say) is
        refused like a cassette; a printed line has credentials masked instead.
        """
        with self._lock:
            self.counts[outcome.how] += 1
            record = self._record(outcome)
            if record is not None:
                line = record_line(record)
                try:
                    refuse_leaks(line, outcome.secrets, where=f"run log {self.log_path}")
                except SecretLeakError as exc:
                    self.refused.append(str(exc))
                    record = None
                else:
                    self.records.append(record)
                    if self._writer is not None:
                        self._writer.append_line(record.key, line)
            if self._echo is not None:
                self._echo(_masked(_line(outcome, record), outcome.secrets))

    def _record(self, outcome: Outcome) -> AttemptRecord | None:
        api = outcome.destination.adapter
        if api is None or (outcome.interaction is None and outcome.how != "miss"):
            return None
        name = outcome.cassette.name
        index = self._ordinals[name]
        self._ordinals[name] += 1
        if outcome.interaction is None:
            interaction = Interaction(outcome.request, WireResponse(0))
            result: Decision | ProviderError | None = None
        else:
            interaction = outcome.interaction
            result = parse_response(api, interaction)
        exchange = ModelExchange(index, api, interaction, result, outcome.miss, outcome.body_text)
        contract = self.contract or self._declared_tools(api, interaction.request.body)
        conversation = Conversation(self.run_id, self.target, name, contract=contract)
        found = call_findings(result, contract)
        (record,) = exchange_records(
            conversation,
            [exchange],
            findings={index: found},
            expectations={},
            elapsed_ms=outcome.elapsed_ms,
        )
        # exchange_records times the first exchange of a conversation only; here each is one.
        return replace(record, elapsed_ms=outcome.elapsed_ms)

    def _declared_tools(self, api: str, body: object) -> Contract:
        """The tools a request declared, one contract per distinct list: clients send the
        same tools again and again, and a contract compiles its validators once."""
        declared = declared_tools(api, body)
        # marshal writes values faithfully (`true` is not `1`) and three times faster than
        # json.dumps; equal bytes are equal tools, and unequal bytes for equal tools (keys
        # in another order) only cost one more entry.
        specs = tuple((t.name, t.description, t.parameters, t.effect) for t in declared.tools)
        key = (api, marshal.dumps(specs, 0))
        known = self._declared.get(key)
        if known is None:
            if len(self._declared) >= _KNOWN_TOOL_LISTS:
                self._declared.clear()
            known = self._declared[key] = declared
        return known

    def summary(self) -> str:
        """`3 recorded, 0 replayed, 1 miss, 0 error; run log runs/....jsonl`."""
        counts = ", ".join(f"{self.counts[how]} {how}" for how in HOWS)
        where = f"; run log {self.log_path}" if self.log_path else ""
        return counts + where

    def close(self) -> None:
        """Close the run log."""
        with self._lock:
            if self._writer is not None:
                # A proxy ends when it is stopped: its log is complete then.
                self._writer.end(RunEnd(self.run_id, "proxy", True, len(self.records)))
                self._writer.close()
                self._writer = None


def _masked(text: str, secrets: Sequence[str]) -> str:
    for value in secrets:
        if len(value) >= 8:
            text = text.replace(value, "***")
    return KEY_SHAPED.sub("***", text)


def _line(outcome: Outcome, record: AttemptRecord | None) -> str:
    path = outcome.destination.path.split("?", 1)[0]
    response = outcome.interaction.response if outcome.interaction is not None else None
    status = f" {response.status}" if response is not None else ""
    head = f"{outcome.how} {outcome.cassette.name}: {outcome.request.method} {path}{status}"
    if outcome.message is not None:
        first = outcome.message.splitlines()[0] if outcome.message else ""
        return f"{head}: {first}"
    if record is not None and record.steps:
        decision = record.steps[0].decision
        calls = ", ".join(call.name for call in decision.calls)
        return f"{head} {decision.kind}{f' {calls}' if calls else ''} ({outcome.elapsed_ms} ms)"
    return f"{head} ({outcome.elapsed_ms} ms)"
