"""BFCL function documents as JSON Schema 2020-12, and names every provider accepts.

Types are mapped as BFCL itself maps them when it sends functions to providers:
`dict` -> object, `float` -> number, `tuple` -> array, `any` -> string; the root
`dict` becomes `"type": "object"`; a property without a type is a string. `optional`
(not JSON Schema) is dropped; every other keyword is kept.

BFCL's possible answers are what a right call may send, so the schema must accept
them: where a parameter's first answer has another JSON type than declared (BFCL's
"variable" answers, e.g. null, or a string for an integer), that type is added
(`["integer", "null"]`); where an answer lies outside an `enum`, it joins the enum;
where an answer breaks another keyword (a `format`, a bound), that keyword is
dropped. Each change is reported. The declared type stays first: the `bfcl` rules read
it there.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from fcreplay.judge.schema import ArgumentValidator

TYPES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": "string",
    "integer": "integer",
    "string": "string",
    "boolean": "boolean",
    "array": "array",
    "number": "number",
    "object": "object",
}
"""BFCL type -> JSON Schema type."""
MAY_OMIT = ""
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def safe_name(name: str) -> str:
    """A tool name providers accept: dots (and anything else) become `_`, as BFCL does."""
    safe = _UNSAFE.sub("_", name)
    if not re.match(r"[a-zA-Z_]", safe[:1]):
        safe = "_" + safe
    return safe[:64]


def json_type(value: Any) -> str:
    """The JSON Schema type of a decoded JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def function_schema(
    parameters: Any, answers: dict[str, list[Any]], label: str
) -> tuple[dict[str, Any], list[str]]:
    """The JSON Schema of one function's parameters, widened for its answers; and notes."""
    notes: list[str] = []
    schema = _node(parameters if isinstance(parameters, dict) else {}, label, notes)
    schema["type"] = "object"
    schema.setdefault("properties", {})
    properties = schema["properties"]
    for name, possible in answers.items():
        if name in properties and isinstance(possible, list):
            _fit(properties[name], possible, f"{label}.{name}", notes)
    return schema, notes


def _node(node: dict[str, Any], label: str, notes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            mapped = TYPES.get(value) if isinstance(value, str) else None
            if mapped is None:
                notes.append(f"{label}: type {value!r} read as string")
            out["type"] = mapped or "string"
        elif key == "properties" and isinstance(value, dict):
            out[key] = {
                name: _node(sub if isinstance(sub, dict) else {}, f"{label}.{name}", notes)
                for name, sub in value.items()
            }
        elif key == "items" and isinstance(value, dict):
            out[key] = _node(value, f"{label}[]", notes)
        elif key == "optional":
            continue  # not JSON Schema; BFCL's required list says the same
        elif key == "required" and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            notes.append(f"{label}: required {value!r} is not a list of names; dropped")
        else:
            out[key] = copy.deepcopy(value)
    if "type" not in out:
        out["type"] = "object" if "properties" in out else "string"
    return out


def _fit(prop: dict[str, Any], possible: list[Any], label: str, notes: list[str]) -> None:
    """Make the property accept the answers BFCL may accept (module doc)."""
    values = [a for a in possible if not (isinstance(a, str) and a == MAY_OMIT)]
    declared = prop.get("type")
    if not values or not isinstance(declared, str):
        return
    if declared == "object" or (
        declared == "array" and isinstance(prop.get("items"), dict) and _typed(prop["items"])
    ):
        return  # answers here are BFCL's per-key answer structures, not values
    first = json_type(values[0])
    if not _accepts(declared, values[0]):
        prop["type"] = [declared, first]
        notes.append(f"{label}: BFCL's answers are {first}, the schema admits {first} too")
    if declared == "array" and isinstance(prop.get("items"), dict):
        _fit_items(prop["items"], values, label, notes)
    kinds = {first, declared}
    same = [
        v
        for v in values
        if json_type(v) in kinds or (json_type(v) == "integer" and "number" in kinds)
    ]
    for value in same:
        _admit(prop, value, label, notes)


def _typed(items: dict[str, Any]) -> bool:
    return items.get("type") == "object"


def _fit_items(items: dict[str, Any], values: list[Any], label: str, notes: list[str]) -> None:
    declared = items.get("type")
    if not isinstance(declared, str):
        return
    for answer in values:
        if isinstance(answer, list):
            head = next((a for a in answer if not (isinstance(a, str) and a == MAY_OMIT)), None)
            if head is not None and not _accepts(declared, head):
                kind = json_type(head)
                items["type"] = [declared, kind]
                notes.append(f"{label}[]: BFCL's answers hold {kind}, the items admit it too")
                return


def _accepts(declared: str, value: Any) -> bool:
    kind = json_type(value)
    if kind == declared or (declared == "number" and kind == "integer"):
        return True
    return declared == "integer" and kind == "number" and float(value).is_integer()


def _admit(prop: dict[str, Any], value: Any, label: str, notes: list[str]) -> None:
    """Change enum or drop the keyword that rejects an answer of the accepted types."""
    for _ in range(8):  # each pass removes one cause; a property has few keywords
        violations = ArgumentValidator(prop).violations(value)
        if not violations:
            return
        violation = violations[0]
        target = prop if not violation.path else prop.get("items")
        if (
            not isinstance(target, dict)
            or violation.keyword not in target
            or violation.keyword == "type"
        ):
            notes.append(f"{label}: the answer {value!r} breaks {violation.keyword}; kept")
            return
        if violation.keyword == "enum" and isinstance(target["enum"], list):
            target["enum"] = [*target["enum"], violation.instance]
            notes.append(f"{label}: answer {violation.instance!r} added to the enum")
        else:
            dropped = target.pop(violation.keyword)
            notes.append(
                f"{label}: {violation.keyword} {dropped!r} dropped: answer {value!r} breaks it"
            )
