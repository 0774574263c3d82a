"""Suite configuration from [tool.fcreplay] in pyproject.toml, fcreplay.toml or --config."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcreplay.adapters.registry import get_adapter
from fcreplay.errors import InputError
from fcreplay.schemadiff.classes import ALLOWABLE
from fcreplay.sources import read_text

VARIANTS = ("auto", "forced", "no_tools", "reversed")
"""auto: tools, model chooses; forced: the expected tool is forced (argument filling);
no_tools: control run with no tools; reversed: tool order reversed (position bias)."""

TARGET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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


@dataclass(frozen=True)
class Price:
    """What one model's tokens cost, in the currency of your choice per million tokens."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    """Cached input tokens; None: priced as other input tokens."""


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
    temperature: float | None = 0.0
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
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise ValueError("must be a positive number of seconds")
    return float(value)


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


_PRICE_KEYS = ("input_per_mtok", "output_per_mtok", "cached_input_per_mtok")


def _prices(value: Any) -> tuple[tuple[str, Price], ...]:
    if not isinstance(value, dict):
        raise ValueError(
            "must be a table: model id = {input_per_mtok = ..., output_per_mtok = ...}"
        )
    prices = []
    for model, entry in value.items():
        if not isinstance(entry, dict) or not {"input_per_mtok", "output_per_mtok"} <= set(entry):
            raise ValueError(f"{model!r}: needs input_per_mtok and output_per_mtok")
        unknown = sorted(set(entry) - set(_PRICE_KEYS))
        if unknown:
            raise ValueError(
                f"{model!r}: unknown key {unknown[0]!r} (known: {', '.join(_PRICE_KEYS)})"
            )
        if not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            for v in entry.values()
        ):
            raise ValueError(f"{model!r}: prices must be numbers of at least 0")
        prices.append((str(model), Price(**{k: float(v) for k, v in entry.items()})))
    return tuple(prices)


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
    if not isinstance(value, str) or not TARGET_NAME.match(value):
        raise ValueError(f"must match {TARGET_NAME.pattern} (it becomes a folder name)")
    return value


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
    "temperature": _temperature,
    "max_output_tokens": _positive_int,
    "repetitions": _positive_int,
    "parallel_tool_calls": _optional_bool,
    "max_steps": _positive_int,
    "variants": _variants,
    "request_timeout": _seconds,
    "max_retries": _count,
    "simulator_script": _path,
    "schema_diff_allow": _schema_diff_classes,
    "prices": _prices,
}
_TARGET_FIELDS: dict[str, FieldRule] = {
    "name": _target_name,
    "adapter": _adapter,
    "model": _text,
    "base_url": _base_url,
    "api_key_env": _env_name,
    "stream": _bool,
    "strict": _bool,
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
    for key in _REQUIRED:
        if key not in values:
            raise InputError.at(source, None, f"{prefix}{key} is required")
    root = source.parent
    for key, value in list(values.items()):
        if isinstance(value, Path):
            values[key] = root / value
    for key in ("cassettes", "golden", "runs"):
        values.setdefault(key, root / key)
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
