"""Suite configuration from [tool.fcreplay] in pyproject.toml, fcreplay.toml or --config."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcreplay.adapters.registry import get_adapter
from fcreplay.cassettes.redaction import url_secrets
from fcreplay.errors import InputError
from fcreplay.inputs import target_options as options
from fcreplay.inputs.prices import Price, parse_prices
from fcreplay.inputs.target_options import Header, SettingsOverride
from fcreplay.limits import DEFAULT_LIMITS, LIMIT_KEYS, Limits, limit_value, positive_seconds
from fcreplay.names import TARGET_NAME, is_name
from fcreplay.names import VARIANTS as VARIANTS
from fcreplay.schemadiff.classes import ALLOWABLE
from fcreplay.sources import read_text

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")


@dataclass(frozen=True)
class Target:
    """One provider endpoint and model the suite runs against."""

    name: str
    adapter: str
    """A built-in or registered adapter name, an entry point name, or
    "package.module:attribute"; resolved when the configuration loads."""
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable holding the key; the key itself is never stored."""
    stream: bool = False
    strict: bool = False
    # Request options for deployments with additions (inputs.target_options, docs/config.md).
    headers: tuple[Header, ...] = ()
    query: tuple[tuple[str, str], ...] = ()
    extra_body: dict[str, Any] = field(default_factory=dict, hash=False)
    settings: SettingsOverride = field(default_factory=SettingsOverride)
    api_key_header: str | None = None
    api_key_prefix: str | None = None


@dataclass(frozen=True)
class SuiteConfig:
    """Where the suite's files are and how requests are made."""

    source: Path
    """The file the configuration was read from."""
    root: Path
    """Relative paths in the configuration are relative to this folder."""
    contract: Path
    cases: Path
    system_prompt: Path | None = None
    prompt_version: str = "unversioned"
    cases_version: str | None = None
    tool_results: Path | None = None
    cassettes: Path = Path("cassettes")
    golden: Path = Path("golden")
    runs: Path = Path("runs")
    cache: Path = Path(".fcreplay/cache")
    """check's cache (disposable, git-ignored by the file it writes there)."""
    temperature: float | None = 0.0
    top_p: float | None = None
    max_output_tokens: int = 500
    repetitions: int = 1
    parallel_tool_calls: bool | None = None
    max_steps: int = 4
    variants: tuple[str, ...] = ("auto",)
    request_timeout: float = 60.0
    max_retries: int = 3
    simulator_script: Path | None = None
    """Script `fcreplay simulate` serves by default (the bundled loopback simulator)."""
    schema_diff_allow: tuple[str, ...] = ()
    """Schema-diff classes that do not fail `fcreplay schema-diff` (e.g. constraint_lost)."""
    prices: tuple[tuple[str, Price], ...] = ()
    """Per model id, its token prices: the report then gives the cost of an operation."""
    targets: tuple[Target, ...] = ()
    limits: Limits = DEFAULT_LIMITS
    """Bounds on what is read and recorded (keys `max_json_depth`, ... at top level)."""
    secret_headers: tuple[str, ...] = ()
    """Header names whose values are credentials: never recorded, refused in any output."""

    def secret_values(self) -> list[str]:
        """The credentials this suite handles: the values of its key variables (where
        set) and what its base URLs carry in user-info or key parameters."""
        values = [os.environ.get(t.api_key_env, "") for t in self.targets if t.api_key_env]
        values += [os.environ.get(h.env, "") for t in self.targets for h in t.headers if h.env]
        for target in self.targets:
            values += url_secrets(target.base_url)
        return [value for value in values if value]

    def target(self, name: str) -> Target:
        """Return the target called `name` or raise an InputError listing the others."""
        for target in self.targets:
            if target.name == name:
                return target
        known = ", ".join(t.name for t in self.targets) or "none configured"
        raise InputError.at(self.source, None, f"no target {name!r} (known: {known})")


FieldRule = Callable[[Any], Any]


def _path(value: Any) -> Path:
    if not isinstance(value, str) or not value:
        raise ValueError("must be a path string")
    return Path(value)


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("must be a non-empty string")
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _optional_bool(value: Any) -> bool | None:
    return None if value == "default" else _bool(value)


def _positive_int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError("must be a whole number of at least 1")
    return value


def _count(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError("must be a whole number of at least 0")
    return value


def _seconds(value: Any) -> float:
    return positive_seconds(value)


def _limit(key: str) -> FieldRule:
    return lambda value: limit_value(key, value)


def _temperature(value: Any) -> float | None:
    if value == "default":
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 2:
        raise ValueError('must be a number from 0 to 2, or "default"')
    return float(value)


def _variants(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or any(v not in VARIANTS for v in value):
        raise ValueError(f"must be a non-empty list drawn from {', '.join(VARIANTS)}")
    if len(set(value)) != len(value):
        raise ValueError("lists a variant twice")
    return tuple(value)


def _schema_diff_classes(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or any(v not in ALLOWABLE for v in value):
        raise ValueError(f"must be a list drawn from {', '.join(ALLOWABLE)}")
    return tuple(value)


def _header_names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and HEADER_NAME.match(v) for v in value
    ):
        raise ValueError('must be a list of HTTP header names, e.g. ["x-portkey-api-key"]')
    return tuple(v.lower() for v in value)


def _adapter(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError('must be an adapter name or "package.module:attribute"')
    # Resolved now, so an unknown or broken adapter is reported at this key
    # (UnknownAdapterError is a ValueError).
    get_adapter(value)
    return value


def _env_name(value: Any) -> str:
    if not isinstance(value, str) or not ENV_NAME.match(value):
        raise ValueError(
            "must be the NAME of an environment variable (the key itself never goes "
            "in configuration)"
        )
    return value


def _target_name(value: Any) -> str:
    if not is_name(TARGET_NAME, value):
        raise ValueError(f"must match {TARGET_NAME.pattern} (it becomes a folder name)")
    return str(value)


def _base_url(value: Any) -> str:
    if not isinstance(value, str) or not re.match(r"^https?://[^\s]+$", value):
        raise ValueError("must be an http:// or https:// URL")
    return value.rstrip("/")


_SUITE_FIELDS: dict[str, FieldRule] = {
    "contract": _path,
    "cases": _path,
    "system_prompt": _path,
    "prompt_version": _text,
    "cases_version": _text,
    "tool_results": _path,
    "cassettes": _path,
    "golden": _path,
    "runs": _path,
    "cache": _path,
    "temperature": _temperature,
    "top_p": options.top_p,
    "max_output_tokens": _positive_int,
    "repetitions": _positive_int,
    "parallel_tool_calls": _optional_bool,
    "max_steps": _positive_int,
    "variants": _variants,
    "request_timeout": _seconds,
    "max_retries": _count,
    "simulator_script": _path,
    "schema_diff_allow": _schema_diff_classes,
    "secret_headers": _header_names,
    "allow_outside_project": _bool,
    "prices": parse_prices,
    **{key: _limit(key) for key in LIMIT_KEYS},
}
_TARGET_FIELDS: dict[str, FieldRule] = {
    "name": _target_name,
    "adapter": _adapter,
    "model": _text,
    "base_url": _base_url,
    "api_key_env": _env_name,
    "stream": _bool,
    "strict": _bool,
    "headers": options.headers,
    "query": options.query,
    "extra_body": options.extra_body,
    "settings": options.settings,
    "api_key_header": options.api_key_header,
    "api_key_prefix": options.api_key_prefix,
}
_REQUIRED = ("contract", "cases")
_TARGET_REQUIRED = ("name", "adapter", "model")


def find_config(start: Path | None = None) -> Path:
    """Find fcreplay.toml, or a pyproject.toml with [tool.fcreplay], here or above."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "fcreplay.toml"
        if candidate.is_file():
            return Path(os.path.relpath(candidate))
        project = folder / "pyproject.toml"
        if project.is_file() and "[tool.fcreplay]" in read_text(project):
            return Path(os.path.relpath(project))
    raise InputError.at(
        here,
        None,
        "no fcreplay configuration here or in any parent folder; add [tool.fcreplay] "
        "to pyproject.toml, create fcreplay.toml, or pass --config PATH",
    )


def load_config(path: str | Path | None = None) -> SuiteConfig:
    """Load and check a suite configuration; relative paths resolve from its folder."""
    source = Path(path) if path is not None else find_config()
    text = read_text(source)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise InputError.at(
            source, int(line.group(1)) if line else None, f"not valid TOML: {exc}"
        ) from None
    if source.name == "pyproject.toml":
        table = document.get("tool", {}).get("fcreplay")
        if not isinstance(table, dict):
            raise InputError.at(source, None, "has no [tool.fcreplay] table")
        prefix = "tool.fcreplay."
    elif (
        set(document) == {"tool"}
        and isinstance(document["tool"], dict)
        and isinstance(document["tool"].get("fcreplay"), dict)
    ):
        # A standalone file written like pyproject.toml: the same keys under [tool.fcreplay].
        table, prefix = document["tool"]["fcreplay"], "tool.fcreplay."
    else:
        table, prefix = document, ""
    return _build(table, source, text, prefix)


def _build(table: dict[str, Any], source: Path, text: str, prefix: str) -> SuiteConfig:
    def fail(key: str, message: str) -> InputError:
        return InputError.at(source, _line_of_key(text, key, prefix), f"{prefix}{key}: {message}")

    values: dict[str, Any] = {}
    for key, raw in table.items():
        if key == "targets":
            continue
        check = _SUITE_FIELDS.get(key)
        if check is None:
            raise fail(key, f"unknown key (known: {', '.join(sorted(_SUITE_FIELDS))}, targets)")
        try:
            values[key] = check(raw)
        except ValueError as exc:
            raise fail(key, str(exc)) from None
    limits = {key: values.pop(key) for key in LIMIT_KEYS if key in values}
    if limits:
        values["limits"] = Limits(**limits)
    for key in _REQUIRED:
        if key not in values:
            raise InputError.at(source, None, f"{prefix}{key} is required")
    root = source.parent
    outside_allowed = values.pop("allow_outside_project", False)
    for key, value in list(values.items()):
        if isinstance(value, Path):
            values[key] = root / value
            if not outside_allowed and not _inside(values[key], root):
                raise fail(
                    key,
                    f"{str(value)!r} leads outside the project folder {root.resolve()}; "
                    "move it inside, or set allow_outside_project = true if that is meant",
                )
    for key in ("cassettes", "golden", "runs"):
        values.setdefault(key, root / key)
    values.setdefault("cache", root / ".fcreplay" / "cache")
    raw_targets = table.get("targets", [])
    if not isinstance(raw_targets, list):
        raise fail("targets", "must be an array of tables ([[tool.fcreplay.targets]])")
    targets: list[Target] = []
    for index, raw in enumerate(raw_targets):
        label = f"targets[{index}]"
        if not isinstance(raw, dict):
            raise fail(label, "must be a table")
        fields: dict[str, Any] = {}
        for key, value in raw.items():
            check = _TARGET_FIELDS.get(key)
            if check is None:
                raise fail(
                    f"{label}.{key}",
                    f"unknown key (known: {', '.join(sorted(_TARGET_FIELDS))})",
                )
            try:
                fields[key] = check(value)
            except ValueError as exc:
                raise fail(f"{label}.{key}", str(exc)) from None
        for key in _TARGET_REQUIRED:
            if key not in fields:
                raise fail(label, f"{key} is required")
        if any(t.name == fields["name"] for t in targets):
            raise fail(f"{label}.name", f"duplicate target name {fields['name']!r}")
        targets.append(Target(**fields))
    return SuiteConfig(source=source, root=root, targets=tuple(targets), **values)


def _inside(path: Path, root: Path) -> bool:
    # Symlinks followed: a committed link must not carry reads or writes elsewhere.
    resolved, base = path.resolve(), root.resolve()
    return resolved == base or base in resolved.parents


def _line_of_key(text: str, key: str, prefix: str) -> int | None:
    """Best-effort line of `key = ...` in TOML text (tomllib keeps no positions).

    `key` is "name" or "targets[2].name"; the search starts at the table that
    holds it, so a `name` in [project] is not mistaken for a target's.
    """
    start = max(text.find(f"[{prefix.rstrip('.')}]"), 0) if prefix else 0
    target = re.match(r"targets\[(\d+)\]\.?(.*)", key)
    if target:
        headers = [m.end() for m in re.finditer(r"^\[\[.*targets\]\]", text, re.M)]
        index = int(target.group(1))
        if index >= len(headers):
            return None
        start, key = headers[index], target.group(2)
        if not key:
            return text.count("\n", 0, start) + 1
    match = re.compile(rf"^\s*{re.escape(key)}\s*=", re.MULTILINE).search(text, start)
    return text.count("\n", 0, match.start()) + 1 if match else None
