"""Provider compatibility: what each target's provider rejects, ignores or transforms.

For every configured target, the contract is checked as that target's adapter
sends it (`wire_schema` with the target's strict flag, and the tools read back
from a request the adapter builds) against the provider rules the adapter
declares (`Capabilities.lint`), which cite `docs/providers.md`:

- error: the provider would reject the request (HTTP 400): a keyword its
  strict subset does not support, a broken strict invariant, a tool name it
  refuses, more tools than it takes. `fcreplay lint` exits 1.
- warning: the request is accepted but the contract is not carried or not
  enforced as written: a keyword the provider may ignore or whose acceptance is
  unconfirmed, a constraint the adapter's transform moves or drops, a setting
  the provider has no knob for. Never fails lint.
- note: worth knowing, nothing to do (e.g. a schema subset the adapter does not
  use, or an adapter that cannot read its requests back, so only its names are
  checked).

Each issue cites the rule it comes from, e.g. "OpenAI Structured Outputs: every
object needs additionalProperties: false (docs/providers.md §2.3)".

This module runs the checks and reports the issues: tool names and counts from
the declared `Provider`, the adapter's transform read back, then the declared
rules' own check. `lint.rules` holds the shapes they share (levels, rule shapes,
the schema walk); the rules themselves live with their adapters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fcreplay.adapters.protocol import ClientAdapter, ReadBackAdapter
from fcreplay.adapters.registry import get_adapter
from fcreplay.inputs.config import Target
from fcreplay.inputs.contract import ToolSpec
from fcreplay.inputs.suite import Suite
from fcreplay.lint.rules import LEVELS as LEVELS
from fcreplay.lint.rules import Found as Found
from fcreplay.lint.rules import Level as Level
from fcreplay.lint.rules import LintRules, LintSubject, Provider
from fcreplay.neutral import Message, RequestSettings, ToolChoice
from fcreplay.schemadiff.classes import show_value, tool_differences
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
    """The provider rule, cited: "<provider rule> (docs/providers.md §N)"."""

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


def lint_suite(suite: Suite) -> list[CompatIssue]:
    """Issues of every configured target, in configuration order."""
    tools = list(suite.contract.tools)
    # Cases with their own tool sets send fewer tools than the contract holds.
    per_request = max(len(case.tools or tools) for case in suite.cases) if suite.cases else None
    return [
        issue
        for target in suite.config.targets
        for issue in lint_target(
            target,
            tools,
            parallel_tool_calls=suite.config.parallel_tool_calls,
            per_request=per_request,
        )
    ]


def lint_target(
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
    rules = adapter.CAPABILITIES.lint
    found: list[tuple[Level, str, str, str]] = []
    if rules is not None:
        found += _names_and_counts(rules.provider, tools, per_request)
    if isinstance(adapter, ReadBackAdapter):
        settings = RequestSettings(ToolChoice("auto"), parallel_tool_calls, strict=target.strict)
        try:
            request = adapter.build_request(target.model, [Message("user", "?")], tools, settings)
        except ValueError as exc:
            message = f"the adapter cannot build a request: {exc}"
            changed: list[tuple[Level, str, str, str]] = [
                ("error", "", message, "adapter build_request")
            ]
        else:
            changed = list(_transforms(target, adapter, rules, tools, request.body))
        found += changed
        wired = tuple((tool, adapter.wire_schema(tool.parameters, target.strict)) for tool in tools)
        if rules is not None:
            subject = LintSubject(
                model=target.model,
                strict=target.strict,
                parallel=parallel_tool_calls,
                tools=tuple(tools),
                wired=wired,
                carried=not changed,
            )
            found += rules.check(subject)
    else:
        found.append(_unreadable(adapter))
    issues = [CompatIssue(target.name, *item) for item in found]
    return sorted(issues, key=lambda issue: LEVELS.index(issue.level))


def _unreadable(adapter: ClientAdapter) -> tuple[Level, str, str, str]:
    return (
        "note",
        "",
        f"the {adapter.NAME} adapter cannot read its requests back (it has no sent_tools, "
        "read_request and wire_schema): only tool names and counts are checked",
        "fcreplay: schemas are checked as the adapter sends them",
    )


def _names_and_counts(
    provider: Provider, tools: Sequence[ToolSpec], per_request: int | None = None
) -> Found:
    for tool in tools:
        if not provider.name.match(tool.name):
            yield "error", pointer(tool.name), "tool name is refused", provider.name_rule
        elif provider.legacy_name is not None and not provider.legacy_name(tool.name):
            yield "warning", pointer(tool.name), provider.legacy_name_message, provider.name_rule
    declared = len(tools) if per_request is None else per_request
    if provider.max_tools is not None and declared > provider.max_tools:
        yield (
            provider.max_tools_level,
            "",
            f"{declared} tools declared, more than {provider.max_tools}",
            provider.max_tools_rule,
        )


def _transforms(
    target: Target,
    adapter: ReadBackAdapter,
    rules: LintRules | None,
    tools: Sequence[ToolSpec],
    body: Any,
) -> Found:
    """What the adapter's request `body` carries differently from the contract (read back)."""
    sent = {spec.name: spec for spec in adapter.sent_tools(body)}
    rule = (rules.strict_transform_rule if rules and target.strict else None) or (
        "the adapter's schema transform differs from the contract (docs/providers.md §9, row 8)"
    )
    for tool in tools:
        spec = sent.get(tool.name)
        if spec is None:
            yield "error", pointer(tool.name), "the adapter's request does not declare it", rule
            continue
        for change in tool_differences(
            tool, spec, adapter.wire_schema(tool.parameters, target.strict)
        ):
            if change.kind == "lossless":
                continue
            template = _TRANSFORM_MESSAGES.get(change.kind, _TRANSFORM_MESSAGES["semantic_change"])
            message = template.format(
                contract=show_value(change.contract), sent=show_value(change.sent)
            )
            yield "warning", change.pointer, f"{message} ({change.kind})", rule


_TRANSFORM_MESSAGES = {
    "constraint_lost": "{contract} is not sent as a constraint (sent: {sent}), so the "
    "provider does not enforce it",
    "semantic_change": "sent as {sent} instead of {contract}: the provider enforces a "
    "different schema",
    "description_changed": "the model reads {sent} instead of {contract}",
}
