"""Provider compatibility: what each target's provider rejects, ignores or transforms.

For every configured target, the contract is checked as that target's adapter
sends it (`wire_schema` with the target's strict flag, and the tools read back
from a request the adapter builds) against the provider rules in
`providers.md`:

- error: the provider would reject the request (HTTP 400): a keyword its
  strict subset does not support, a broken strict invariant, a tool name it
  refuses, more tools than it takes. `fcreplay lint` exits 1.
- warning: the request is accepted but the contract is not carried or not
  enforced as written: a keyword the provider may ignore or whose acceptance is
  unconfirmed, a constraint the adapter's transform moves or drops, a setting
  the provider has no knob for. Never fails lint.
- note: worth knowing, nothing to do (e.g. Gemini's `parameters` subset, which
  this adapter does not use).

Each issue cites the rule it comes from, e.g. "OpenAI Structured Outputs: every
object needs additionalProperties: false (providers.md §2.3)".

This module is the public face: it runs the checks and reports the issues. The rules
live per provider family in `compat_openai`, `compat_anthropic` and `compat_gemini`;
`compat_rules` holds what they share (levels, rule shapes, the schema walk).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fcreplay.adapters import Adapter, get_adapter
from fcreplay.exchange import Message, RequestSettings, ToolChoice
from fcreplay.inputs.config import Target
from fcreplay.inputs.contract import ToolSpec
from fcreplay.inputs.suite import Suite
from fcreplay.lint.anthropic import ANTHROPIC, ANTHROPIC_STRICT, check_anthropic
from fcreplay.lint.gemini import GEMINI, check_gemini
from fcreplay.lint.openai import OPENAI, OPENAI_SO, check_openai
from fcreplay.lint.rules import LEVELS as LEVELS
from fcreplay.lint.rules import Found as Found
from fcreplay.lint.rules import Level as Level
from fcreplay.lint.rules import Provider
from fcreplay.schemadiff.classes import show_value, tool_drifts
from fcreplay.sources import pointer


@dataclass(frozen=True)
class CompatIssue:
    """One thing a target's provider would reject, ignore or change in the contract."""

    target: str
    level: Level
    pointer: str
    """`/<tool>/parameters/...`, `/<tool>` for a whole tool, "" for the whole request."""
    message: str
    rule: str
    """The provider rule, cited: "<provider rule> (providers.md §N)"."""

    def __str__(self) -> str:
        where = self.pointer or "(request)"
        return f"{self.level}: {self.target}: {where}: {self.message} [{self.rule}]"

    def to_json(self) -> dict[str, str]:
        """The issue as a JSON object."""
        return {
            "target": self.target,
            "level": self.level,
            "pointer": self.pointer,
            "message": self.message,
            "rule": self.rule,
        }


_PROVIDERS = {
    "openai_chat": OPENAI,
    "openai_responses": OPENAI,
    "anthropic": ANTHROPIC,
    "gemini": GEMINI,
}


def check_suite(suite: Suite) -> list[CompatIssue]:
    """Issues of every configured target, in configuration order."""
    tools = list(suite.contract.tools)
    # Cases with their own tool sets send fewer tools than the contract holds.
    per_request = max(len(case.tools or tools) for case in suite.cases) if suite.cases else None
    return [
        issue
        for target in suite.config.targets
        for issue in check_target(
            target,
            tools,
            parallel_tool_calls=suite.config.parallel_tool_calls,
            per_request=per_request,
        )
    ]


def check_target(
    target: Target,
    tools: Sequence[ToolSpec],
    *,
    parallel_tool_calls: bool | None = None,
    per_request: int | None = None,
) -> list[CompatIssue]:
    """What `target`'s provider rejects, ignores or transforms in `tools`, errors first.

    `per_request` is the most tools one request declares (default: all of `tools`).
    """
    adapter = get_adapter(target.adapter)
    found: list[tuple[Level, str, str, str]] = []
    provider = _PROVIDERS.get(target.adapter)
    if provider is not None:
        found += _names_and_counts(provider, tools, per_request)
    changed = list(_transforms(target, adapter, tools, parallel_tool_calls))
    found += changed
    wired = [(tool, adapter.wire_schema(tool.parameters, target.strict)) for tool in tools]
    if provider is OPENAI:
        found += check_openai(target, tools, wired, parallel_tool_calls)
    elif provider is ANTHROPIC:
        found += check_anthropic(target, wired)
    elif provider is GEMINI:
        found += check_gemini(target, tools, wired, parallel_tool_calls, carried=not changed)
    issues = [CompatIssue(target.name, *item) for item in found]
    return sorted(issues, key=lambda issue: LEVELS.index(issue.level))


def _names_and_counts(
    provider: Provider, tools: Sequence[ToolSpec], per_request: int | None = None
) -> Found:
    for tool in tools:
        if not provider.name.match(tool.name):
            yield "error", pointer(tool.name), "tool name is refused", provider.name_rule
        elif provider is GEMINI and (len(tool.name) > 64 or ":" in tool.name):
            yield (
                "warning",
                pointer(tool.name),
                "older Gemini API versions refuse it (a colon before 2025-12, more than 64 "
                "characters before 2026-05)",
                provider.name_rule,
            )
    declared = len(tools) if per_request is None else per_request
    if provider.max_tools is not None and declared > provider.max_tools:
        yield (
            provider.max_tools_level,
            "",
            f"{declared} tools declared, more than {provider.max_tools}",
            provider.max_tools_rule,
        )


def _transforms(
    target: Target, adapter: Adapter, tools: Sequence[ToolSpec], parallel: bool | None
) -> Found:
    """What the adapter's request carries differently from the contract (read back)."""
    settings = RequestSettings(ToolChoice("auto"), parallel, strict=target.strict)
    try:
        request = adapter.build_request(target.model, [Message("user", "?")], tools, settings)
    except ValueError as exc:
        yield "error", "", f"the adapter cannot build a request: {exc}", "adapter build_request"
        return
    sent = {spec.name: spec for spec in adapter.sent_tools(request.body)}
    rule = _TRANSFORM_RULES.get(
        (target.adapter, target.strict),
        "the adapter's schema transform differs from the contract (providers.md §9, row 8)",
    )
    for tool in tools:
        spec = sent.get(tool.name)
        if spec is None:
            yield "error", pointer(tool.name), "the adapter's request does not declare it", rule
            continue
        for drift in tool_drifts(tool, spec, adapter.wire_schema(tool.parameters, target.strict)):
            if drift.kind == "lossless":
                continue
            template = _TRANSFORM_MESSAGES.get(drift.kind, _TRANSFORM_MESSAGES["semantic_change"])
            message = template.format(
                contract=show_value(drift.contract), sent=show_value(drift.sent)
            )
            yield "warning", drift.pointer, f"{message} ({drift.kind})", rule


_TRANSFORM_MESSAGES = {
    "constraint_lost": "{contract} is not sent as a constraint (sent: {sent}), so the "
    "provider does not enforce it",
    "semantic_change": "sent as {sent} instead of {contract}: the provider enforces a "
    "different schema",
    "description_changed": "the model reads {sent} instead of {contract}",
}


_TRANSFORM_RULES = {
    ("openai_chat", True): f"{OPENAI_SO}: the strict transform makes every object "
    "additionalProperties: false and optional properties required and nullable "
    "(providers.md §2.3)",
    ("openai_responses", True): f"{OPENAI_SO}: the strict transform makes every object "
    "additionalProperties: false and optional properties required and nullable "
    "(providers.md §2.3)",
    ("anthropic", True): f"{ANTHROPIC_STRICT}: unsupported keywords are moved into the "
    "description, as the SDK's transform does (providers.md §4.3)",
}
