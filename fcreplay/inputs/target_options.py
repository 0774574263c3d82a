"""Per-target request options: extra headers, query and body, settings, and the key header.

These reach deployments that speak a known wire format with additions: Azure OpenAI
(`api-version` in the query, the key in an `api-key` header without a prefix),
OpenRouter (attribution headers, `provider` routing in the body), reasoning models
(`reasoning_effort`, `thinking`, `include`). Each config key is checked here; a
header whose value is a secret names an environment variable (`{env = "NAME"}`),
so it is sent like the API key, never written to a cassette, and refused if it
shows up in one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fcreplay.cassettes.redaction import SECRET_HEADERS, SECRET_QUERY_KEYS

HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$")
"""An HTTP header name (an RFC 9110 token)."""
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Header:
    """One extra request header: a value written in the configuration, or read from `env`."""

    name: str
    """Lower-case."""
    value: str | None = None
    env: str | None = None
    """The environment variable holding a secret value; such a header is never recorded."""


@dataclass(frozen=True)
class SettingsOverride:
    """Request settings a target sets itself, over the suite's; a None value omits one."""

    items: tuple[tuple[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The settings this target sets, by `RequestSettings` field name."""
        return dict(self.items)


def deep_merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `extra` merged in: tables merge key by key, any other value replaces."""
    merged = dict(base)
    for key, value in extra.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = value
    return merged


# --- config rules (each raises ValueError with what to write instead) ------------------


def headers(value: Any) -> tuple[Header, ...]:
    """`headers = {"X-Title" = "my app", "x-portkey-api-key" = {env = "PORTKEY_KEY"}}`."""
    if not isinstance(value, dict):
        raise ValueError('must be a table of header names to values, e.g. {"X-Title" = "app"}')
    found: list[Header] = []
    for name, raw in value.items():
        if not HEADER_NAME.match(name):
            raise ValueError(f"{name!r} is not an HTTP header name")
        lower = name.lower()
        if isinstance(raw, dict):
            env = raw.get("env")
            if set(raw) != {"env"} or not isinstance(env, str) or not _ENV_NAME.match(env):
                raise ValueError(f'{name}: a secret value reads {{env = "ENV_VARIABLE_NAME"}}')
            found.append(Header(lower, env=env))
        elif isinstance(raw, str) and raw:
            if lower in SECRET_HEADERS:
                raise ValueError(
                    f"{name} carries a credential: never write it here; name the environment "
                    f'variable that holds it, {{env = "NAME"}}, or use api_key_env'
                )
            found.append(Header(lower, value=raw))
        else:
            raise ValueError(f'{name}: must be a non-empty string or {{env = "NAME"}}')
    return tuple(found)


def query(value: Any) -> tuple[tuple[str, str], ...]:
    """`query = {"api-version" = "2024-10-21"}`: parameters added to every request URL."""
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError('must be a table of parameter names to strings, e.g. {"api-version" = ""}')
    for key in value:
        if key.lower() in SECRET_QUERY_KEYS:
            raise ValueError(
                f"{key!r} carries a credential: use api_key_env (with api_key_header) instead"
            )
    return tuple(value.items())


def extra_body(value: Any) -> dict[str, Any]:
    """`extra_body = {reasoning_effort = "low"}`: deep-merged into every request body."""
    if not isinstance(value, dict) or not value:
        raise ValueError("must be a non-empty table, deep-merged into every request body")
    return value


def _number(low: float, high: float) -> Callable[[Any], float | None]:
    def rule(value: Any) -> float | None:
        if value == "default":
            return None
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not low <= value <= high
        ):
            raise ValueError(f'must be a number from {low:g} to {high:g}, or "default" to omit it')
        return float(value)

    return rule


def _tokens(value: Any) -> int | None:
    if value == "default":
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError('must be a whole number of at least 1, or "default" to omit it')
    return value


def _parallel(value: Any) -> bool | None:
    if value == "default":
        return None
    if not isinstance(value, bool):
        raise ValueError('must be true, false, or "default" to leave the provider default')
    return value


top_p = _number(0, 1)
"""The rule of a `top_p` value (suite or target)."""

SETTING_RULES: dict[str, Callable[[Any], Any]] = {
    "temperature": _number(0, 2),
    "top_p": top_p,
    "max_output_tokens": _tokens,
    "parallel_tool_calls": _parallel,
}
"""The settings a target may set itself; "default" omits the setting from its requests."""


def settings(value: Any) -> SettingsOverride:
    """`settings = {temperature = "default", max_output_tokens = 2000}`."""
    if not isinstance(value, dict):
        raise ValueError(f"must be a table with any of {', '.join(SETTING_RULES)}")
    items: list[tuple[str, Any]] = []
    for key, raw in value.items():
        rule = SETTING_RULES.get(key)
        if rule is None:
            raise ValueError(f"unknown setting {key!r} (known: {', '.join(SETTING_RULES)})")
        try:
            items.append((key, rule(raw)))
        except ValueError as exc:
            raise ValueError(f"{key}: {exc}") from None
    return SettingsOverride(tuple(items))


def api_key_header(value: Any) -> str:
    """`api_key_header = "api-key"`: the header that carries the key, instead of the adapter's."""
    if not isinstance(value, str) or not HEADER_NAME.match(value):
        raise ValueError("must be an HTTP header name")
    return value.lower()


def api_key_prefix(value: Any) -> str:
    """`api_key_prefix = ""`: what comes before the key in its header ("Bearer " or nothing)."""
    if not isinstance(value, str) or "\n" in value or "\r" in value:
        raise ValueError('must be a string on one line, e.g. "Bearer " or ""')
    return value
