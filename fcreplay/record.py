"""The attempt record: the one typed thing written to and read from `runs/*.jsonl`.

`to_json` keeps the keys in the log's order (the bytes of a run log do not change);
`from_json` reads them back, rejecting a line of the wrong shape (`RecordShapeError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fcreplay.decision import Decision, ProviderError, Signature
from fcreplay.finding import Finding
from fcreplay.fingerprint import Fingerprint
from fcreplay.judge.repair import ArgumentClassification
from fcreplay.names import RUN_ID, SEGMENT, is_name, is_path_name
from fcreplay.neutral import Message, ToolResult
from fcreplay.quickinit import quick

SCHEMA_VERSION = 2
"""Version 2 adds the fingerprints, the cassette path, the opening messages and, per
step, the latency and retries; version 1 lines are still read (without them)."""
READABLE_VERSIONS = (1, 2)

Verdict = Literal["pass", "fail", "error"]
VERDICTS: tuple[Verdict, ...] = ("pass", "fail", "error")

AttemptKey = tuple[str, str, str, int]
"""(target, variant, case_id, attempt): what identifies an attempt within a run."""

REPLAY_MISSES = ("missing_cassette", "missing_interaction")
"""Kinds of `Aborted` that mean the recording lacks the answer, not that a provider failed."""


class RecordShapeError(ValueError):
    """A run-log line is JSON but not an attempt record; the message names the key."""


@dataclass(frozen=True, slots=True)
class Aborted:
    """The attempt got no answer for a reason of fcreplay's (no cassette, connection
    refused, no tool results to answer with), as opposed to a provider's error body."""

    type: str
    """What went wrong, e.g. `connect`, `missing_cassette`, `no_tool_results`."""
    message: str

    def to_json(self) -> dict[str, Any]:
        """The reason as written in the record's `transport_error`."""
        return {"type": self.type, "message": self.message}


AttemptError = Aborted | ProviderError
"""Why an attempt ended without a decision to judge."""


@dataclass(frozen=True, slots=True)
class SentSettings:
    """The request settings of the attempt's first turn, as the log records them."""

    tool_choice: str
    forced_tool: str | None
    parallel_tool_calls: bool | None
    strict: bool
    temperature: float | None
    max_output_tokens: int | None
    stream: bool
    max_steps: int

    def to_json(self) -> dict[str, Any]:
        """The settings, keys in log order."""
        return {
            "tool_choice": self.tool_choice,
            "forced_tool": self.forced_tool,
            "parallel_tool_calls": self.parallel_tool_calls,
            "strict": self.strict,
            "temperature": self.temperature,
            "max_output_tokens": self.max_output_tokens,
            "stream": self.stream,
            "max_steps": self.max_steps,
        }


@dataclass(frozen=True, slots=True)
class ExpectedOutline:
    """What the case expects, in brief: enough for metrics to choose denominators."""

    kind: str
    tools: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The outline as written in the record's `expect`."""
        return {"kind": self.kind, "tools": list(self.tools)}


@quick
@dataclass(frozen=True, slots=True)
class StepRecord:
    """One turn of an attempt: the request's hash, the decision and what followed it."""

    step: int
    request_sha256: str | None
    decision: Decision
    arguments: tuple[ArgumentClassification, ...]
    """The class of each call's arguments, parallel to `decision.calls`."""
    tool_results: tuple[ToolResult, ...] = ()
    findings: tuple[Finding, ...] = ()
    """The findings of this turn (their `step` is left unset here)."""
    latency_ms: int | None = None
    """The provider's answer time, summed over retries, as recorded; None when unknown."""
    retries: int = 0
    """Requests of this turn that were answered with a retryable error and sent again."""

    def to_json(self, version: int = SCHEMA_VERSION) -> dict[str, Any]:
        """The turn, keys in log order."""
        data = {
            "step": self.step,
            "request_sha256": self.request_sha256,
            "decision": self.decision.to_json(),
            "arguments": [c.to_json() for c in self.arguments] if self.arguments else [],
            "tool_results": [r.to_json() for r in self.tool_results] if self.tool_results else [],
            "findings": [f.to_json() for f in self.findings] if self.findings else [],
        }
        if version >= 2:
            data["latency_ms"] = self.latency_ms
            data["retries"] = self.retries
        return data


@quick
@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One attempt of one unit (target × variant × case): what was sent, decided and found."""

    run_id: str
    target: str
    adapter: str
    model: str
    model_reported: str | None
    variant: str
    case_id: str
    attempt: int
    elapsed_ms: int
    request_settings: SentSettings
    request_sha256: str | None
    adapter_version: str
    prompt_version: str | None
    contract_hash: str
    cases_version: str | None
    fcreplay_version: str
    expect: ExpectedOutline
    verdict: Verdict
    signature: Signature | None
    """Of the first phase's decision; None when no decision came."""
    steps: tuple[StepRecord, ...]
    findings: tuple[Finding, ...]
    """Every finding of the attempt, each with its `step`."""
    transport_error: AttemptError | None
    schema_version: int = SCHEMA_VERSION
    test: str | None = None
    """The pytest node id, for records of a test's client traffic; None for suite attempts
    (and then absent from the JSON, so suite run logs keep their bytes)."""
    tags: tuple[str, ...] = ()
    """The case's tags, for metrics per tag; written only when the case has some."""
    fingerprint: Fingerprint | None = None
    """What this run built the unit's requests from (None in version 1 logs)."""
    recorded_with: Fingerprint | None = None
    """A replay's: what the cassette was recorded from, when the cassette says."""
    cassette: str | None = None
    """The unit's cassette file, as the run named it."""
    messages: tuple[Message, ...] = ()
    """The case's opening messages, as sent after the system prompt."""

    @property
    def key(self) -> AttemptKey:
        """The identity of the attempt within its run."""
        return (self.target, self.variant, self.case_id, self.attempt)

    @property
    def unit(self) -> str:
        """`target/variant/case_id`, as progress and problem lines name the unit."""
        return f"{self.target}/{self.variant}/{self.case_id}"

    @property
    def drift(self) -> Finding | None:
        """The request-drift finding, when replay found the request changed."""
        return next((f for f in self.findings if f.code == "request_drift"), None)

    @property
    def replay_miss(self) -> bool:
        """Whether the recording had no answer for this attempt (cassette or interaction)."""
        error = self.transport_error
        return isinstance(error, Aborted) and error.type in REPLAY_MISSES

    @property
    def problem(self) -> str | None:
        """Why the attempt was not replayed faithfully (drift or no answer), if it was not."""
        drift = self.drift
        if drift is not None:
            return drift.message
        return None if self.transport_error is None else self.transport_error.message

    def to_json(self) -> dict[str, Any]:
        """The record as one run-log line's object, keys in log order (test, tags: when set)."""
        data = {
            "schema_version": self.schema_version,
            "run_id": self.run_id,
            "target": self.target,
            "adapter": self.adapter,
            "model": self.model,
            "model_reported": self.model_reported,
            "variant": self.variant,
            "case_id": self.case_id,
            "attempt": self.attempt,
            "elapsed_ms": self.elapsed_ms,
            "request_settings": self.request_settings.to_json(),
            "request_sha256": self.request_sha256,
            "adapter_version": self.adapter_version,
            "prompt_version": self.prompt_version,
            "contract_hash": self.contract_hash,
            "cases_version": self.cases_version,
            "fcreplay_version": self.fcreplay_version,
            "expect": self.expect.to_json(),
            **self.outcome_json(),
        }
        if self.schema_version >= 2:
            data |= self._version_2_json()
        if self.test is not None:
            data["test"] = self.test
        if self.tags:
            data["tags"] = list(self.tags)
        return data

    def outcome_json(self) -> dict[str, Any]:
        """The members of `to_json` that tell this attempt from the unit's others, in order
        (`runline` writes the rest once per unit)."""
        return {
            "verdict": self.verdict,
            "signature": _signature_json(self.signature),
            "steps": [step.to_json(self.schema_version) for step in self.steps],
            "findings": [finding.to_json() for finding in self.findings] if self.findings else [],
            "transport_error": None
            if self.transport_error is None
            else self.transport_error.to_json(),
        }

    def _version_2_json(self) -> dict[str, Any]:
        return {
            "fingerprint": None if self.fingerprint is None else self.fingerprint.to_json(),
            "recorded_with": None if self.recorded_with is None else self.recorded_with.to_json(),
            "cassette": self.cassette,
            "messages": messages_json(self.messages),
        }

    @classmethod
    def from_json(cls, data: Any) -> AttemptRecord:
        """Read a record written by `to_json`; RecordShapeError names what is wrong."""
        if not isinstance(data, dict):
            raise RecordShapeError("not a JSON object")
        version = data.get("schema_version")
        if version not in READABLE_VERSIONS or isinstance(version, bool):
            raise RecordShapeError(
                f"schema_version {version!r}: this fcreplay reads versions "
                f"{', '.join(map(str, READABLE_VERSIONS))}"
            )
        try:
            return cls(
                run_id=_run_id(data),
                target=_name(data, "target", 2),
                adapter=_text(data, "adapter"),
                model=_text(data, "model"),
                model_reported=_optional_text(data, "model_reported"),
                variant=_name(data, "variant"),
                case_id=_name(data, "case_id", 8),
                attempt=_whole(data, "attempt"),
                elapsed_ms=_whole(data, "elapsed_ms"),
                request_settings=SentSettings(**data["request_settings"]),
                request_sha256=_optional_text(data, "request_sha256"),
                adapter_version=_text(data, "adapter_version"),
                prompt_version=_optional_text(data, "prompt_version"),
                contract_hash=_text(data, "contract_hash"),
                cases_version=_optional_text(data, "cases_version"),
                fcreplay_version=_text(data, "fcreplay_version"),
                expect=ExpectedOutline(data["expect"]["kind"], tuple(data["expect"]["tools"])),
                verdict=_verdict(data["verdict"]),
                signature=_signature(data["signature"]),
                steps=tuple(_step(step) for step in _list(data, "steps")),
                findings=tuple(Finding.from_json(f) for f in _list(data, "findings")),
                transport_error=(
                    None if data["transport_error"] is None else error_of(data["transport_error"])
                ),
                test=_optional_text(data, "test") if "test" in data else None,
                tags=tuple(str(tag) for tag in data.get("tags", ())),
                schema_version=version,
                fingerprint=Fingerprint.from_json(data.get("fingerprint")),
                recorded_with=Fingerprint.from_json(data.get("recorded_with")),
                cassette=_optional_text(data, "cassette") if "cassette" in data else None,
                messages=tuple(
                    Message(m["role"], str(m["content"])) for m in data.get("messages", ())
                ),
            )
        except RecordShapeError:
            raise
        except KeyError as exc:
            raise RecordShapeError(f"missing key {exc.args[0]!r}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise RecordShapeError(f"a value of the wrong shape ({exc})") from None


def messages_json(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """A record's `messages` member."""
    return [{"role": m.role, "content": m.content} for m in messages]


def _signature_json(signature: Signature | None) -> list[Any] | None:
    if signature is None:
        return None
    kind, names, arguments = signature
    return [kind, list(names), arguments]


def error_of(data: Mapping[str, Any]) -> AttemptError:
    """An attempt error from its logged form: a provider's carries its HTTP status."""
    if "status" in data:
        return ProviderError.from_json(dict(data))
    return Aborted(str(data["type"]), str(data["message"]))


def _step(data: dict[str, Any]) -> StepRecord:
    return StepRecord(
        step=_whole(data, "step"),
        request_sha256=_optional_text(data, "request_sha256"),
        decision=Decision.from_json(data["decision"]),
        arguments=tuple(ArgumentClassification.from_json(a) for a in data["arguments"]),
        tool_results=tuple(ToolResult.from_json(r) for r in data["tool_results"]),
        findings=tuple(Finding.from_json(f) for f in data["findings"]),
        latency_ms=None if data.get("latency_ms") is None else _whole(data, "latency_ms"),
        retries=_whole(data, "retries") if "retries" in data else 0,
    )


def _signature(data: Any) -> Signature | None:
    if data is None:
        return None
    if not isinstance(data, list) or len(data) != 3:
        raise RecordShapeError("signature: expected [kind, [names], arguments]")
    kind, names, arguments = data
    if not (isinstance(kind, str) and isinstance(arguments, str) and isinstance(names, list)):
        raise RecordShapeError("signature: expected [kind, [names], arguments]")
    return (kind, tuple(str(name) for name in names), arguments)


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data[key]
    if not isinstance(value, list):
        raise RecordShapeError(f"{key}: expected a list, got {type(value).__name__}")
    return value


def _verdict(value: Any) -> Verdict:
    for verdict in VERDICTS:
        if value == verdict:
            return verdict
    raise RecordShapeError(f"verdict {value!r}: expected one of {', '.join(VERDICTS)}")


def _name(data: dict[str, Any], key: str, segments: int = 1) -> str:
    # These become parts of paths (golden files, cassettes), so a crafted log must not
    # smuggle `../x` or an absolute path through them.
    value = _text(data, key)
    if not is_path_name(value, segments):
        raise RecordShapeError(f"{key} {value!r} is not a safe name ({SEGMENT.pattern})")
    return value


def _run_id(data: dict[str, Any]) -> str:
    value = _text(data, "run_id")
    if not is_name(RUN_ID, value):
        raise RecordShapeError(f"run_id {value!r} is not a run id ({RUN_ID.pattern})")
    return value


def _text(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise RecordShapeError(f"{key}: expected a string, got {type(value).__name__}")
    return value


def _optional_text(data: dict[str, Any], key: str) -> str | None:
    return None if data[key] is None else _text(data, key)


def _whole(data: dict[str, Any], key: str) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordShapeError(f"{key}: expected a whole number, got {value!r}")
    return value
