"""JSON Schema 2020-12 through jsonschema: meta-schema checks and compiled validators.

The only module that imports jsonschema; it hands back plain dataclasses. It imports it
only when a plain walk (`plain_schema`, `plain_arguments`) cannot answer alone: most
checks then never import it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from fcreplay.canonical import sorted_json
from fcreplay.judge.plain_arguments import missing
from fcreplay.judge.plain_schema import plainly_valid
from fcreplay.sources import pointer
from fcreplay.strictjson import sorted_exact_json

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Violation:
    """One way an instance breaks its schema, at one place in the instance."""

    path: JsonPath
    keyword: str
    message: str
    instance: Any
    schema_value: Any
    """The keyword's value in the schema (the enum list, the pattern, the bound...)."""

    @property
    def pointer(self) -> str:
        """The instance location as a JSON pointer."""
        return pointer(*self.path)


def meta_schema_problems(schema: Any) -> list[tuple[str, str]]:
    """Check `schema` against the 2020-12 meta-schema; return (pointer, message) pairs."""
    if plainly_valid(schema, _is_regex):
        return []  # what jsonschema would say of it, without its walk
    errors = sorted(_meta_validator().iter_errors(schema), key=_sort_key)
    return [(pointer(*error.absolute_path), error.message) for error in errors]


@cache
def _meta_validator() -> Draft202012Validator:
    # One per process: building it is cheap, but a contract has a schema per tool.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(
        Draft202012Validator.META_SCHEMA,
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


def _is_regex(text: str) -> bool:
    """The format checker's "regex" format, as jsonschema's `is_regex` tells it."""
    try:
        re.compile(text)
    except re.error:
        return False
    return True


class ArgumentValidator:
    """A schema compiled once, reporting every violation sorted by path."""

    _CACHE_LIMIT = 4096

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._compiled: Draft202012Validator | None = None
        self._seen: dict[bytes | str, tuple[Violation, ...]] = {}

    def _validator(self) -> Draft202012Validator:
        # Compiled when the plain walk first cannot answer.
        if self._compiled is None:
            from jsonschema import Draft202012Validator

            self._compiled = Draft202012Validator(
                self._schema, format_checker=Draft202012Validator.FORMAT_CHECKER
            )
        return self._compiled

    def is_valid(self, instance: Any) -> bool:
        """Return whether `instance` satisfies the schema."""
        absent = missing(self._schema, instance)
        if absent is not None:
            return not absent
        return bool(self._validator().is_valid(instance))

    def violations(self, instance: Any) -> list[Violation]:
        """Return every violation, sorted by instance path then keyword.

        Remembered per distinct instance: repetitions and replays send the same
        arguments again and again, and the validator, the repair policy and the
        fake executor all ask about the same call.
        """
        # Bytes for plain data, a string otherwise: the two never collide.
        key: bytes | str | None = sorted_exact_json(instance)
        if key is None:
            key = sorted_json(instance)
        known = self._seen.get(key)
        if known is None:
            found: dict[tuple[str, str], Violation] = {}
            absent = missing(self._schema, instance)
            if absent is not None:
                for path, names in absent:
                    # jsonschema's first error at `path` names every absent property
                    # (`_explain`), the others are the same places: the first's message.
                    message = f"{names[0]!r} is a required property"
                    for name in names:
                        violation = Violation((*path, name), "required", message, None, name)
                        found.setdefault((violation.pointer, violation.keyword), violation)
            else:
                for error in self._validator().iter_errors(instance):
                    for violation in _explain(error):
                        found.setdefault((violation.pointer, violation.keyword), violation)
            known = tuple(sorted(found.values(), key=lambda v: (_path_key(v.path), v.keyword)))
            if len(self._seen) >= self._CACHE_LIMIT:
                self._seen.clear()
            self._seen[key] = known
        return list(known)


def _explain(error: ValidationError) -> Iterable[Violation]:
    """Turn one jsonschema error into violations that each name one location."""
    if error.context:
        from jsonschema.exceptions import best_match

        # anyOf / oneOf: report the branch that came closest, not the umbrella.
        inner = best_match(error.context)
        if inner is not None:
            yield from _explain(inner)
            return
    path: JsonPath = tuple(error.absolute_path)
    keyword = str(error.validator)
    instance = error.instance
    if keyword == "required" and isinstance(instance, dict):
        required: list[str] = list(error.validator_value)  # type: ignore[arg-type]
        for name in required:
            if name not in instance:
                yield Violation((*path, name), keyword, error.message, None, name)
        return
    if keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, dict):
        schema = error.schema if isinstance(error.schema, dict) else {}
        declared = schema.get("properties", {})
        patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
        for name in instance:
            if name not in declared and not any(p.search(name) for p in patterns):
                yield Violation((*path, name), keyword, error.message, instance[name], False)
        return
    yield Violation(path, keyword, error.message, instance, error.validator_value)


def _path_key(path: Iterable[str | int]) -> tuple[tuple[int, str], ...]:
    return tuple((0, f"{part:010d}") if isinstance(part, int) else (1, part) for part in path)


def _sort_key(error: ValidationError) -> tuple[tuple[tuple[int, str], ...], str]:
    return (_path_key(error.absolute_path), str(error.validator))
