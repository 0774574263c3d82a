"""Reading BFCL v4 data files: entries and possible answers, from a folder or the bfcl-eval wheel.

The Berkeley Function Calling Leaderboard ships its data in the `bfcl-eval` package
(Apache-2.0) as JSON Lines named `BFCL_v4_<category>.json`, with the possible answers
of the categories that have them in `possible_answer/` beside them. `--data` may name
that folder, a folder above it (an unpacked wheel), or the wheel file itself.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcreplay.errors import InputError, Problem

AST_CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
"""Single-turn categories BFCL judges with its AST checker (Python), each with answers."""
IRRELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance")
"""Single-turn categories where the right answer is no call at all."""
CATEGORIES = AST_CATEGORIES + IRRELEVANCE_CATEGORIES
PREFIX = "BFCL_v4_"


@dataclass(frozen=True)
class Entry:
    """One BFCL test entry, with its possible answers when the category has them."""

    id: str
    category: str
    messages: tuple[dict[str, Any], ...]
    """The first (only) question: role/content messages."""
    functions: tuple[dict[str, Any], ...]
    """BFCL's function documents, as shipped."""
    answers: tuple[dict[str, dict[str, list[Any]]], ...] | None
    """`ground_truth`: one {function: {parameter: [possible answers]}} per expected call."""
    line: int
    source: str


def load_category(data: Path, category: str) -> list[Entry]:
    """The entries of one category, with their answers; InputError names what is missing."""
    if category not in CATEGORIES:
        raise InputError.at(
            data,
            None,
            f"category {category!r} is not a single-turn AST category "
            f"(known: {', '.join(CATEGORIES)})",
        )
    read = _reader(data)
    name = f"{PREFIX}{category}.json"
    entries_text, where = read(name)
    answers: dict[str, Any] = {}
    if category in AST_CATEGORIES:
        answers_text, answers_where = read(f"possible_answer/{name}")
        for _, line in _lines(answers_text, answers_where):
            answers[str(line.get("id"))] = line.get("ground_truth")
    entries: list[Entry] = []
    problems: list[Problem] = []
    for number, raw in _lines(entries_text, where):
        entry_id = raw.get("id")
        question = raw.get("question")
        functions = raw.get("function")
        if (
            not isinstance(entry_id, str)
            or not isinstance(question, list)
            or not question
            or not isinstance(question[0], list)
            or not isinstance(functions, list)
        ):
            problems.append(Problem(where, number, "not a BFCL entry (id, question, function)"))
            continue
        truth = answers.get(entry_id) if category in AST_CATEGORIES else None
        if category in AST_CATEGORIES and not isinstance(truth, list):
            problems.append(Problem(where, number, f"{entry_id}: no possible answer"))
            continue
        entries.append(
            Entry(
                entry_id,
                category,
                tuple(question[0]),
                tuple(functions),
                tuple(truth) if truth is not None else None,
                number,
                where,
            )
        )
    if problems:
        raise InputError(problems)
    return entries


def _lines(text: str, where: str) -> list[tuple[int, dict[str, Any]]]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError.at(where, number, f"not valid JSON: {exc.msg}") from None
        if not isinstance(value, dict):
            raise InputError.at(where, number, "a BFCL line is a JSON object")
        found.append((number, value))
    return found


def _reader(data: Path) -> Callable[[str], tuple[str, str]]:
    """A function reading a data file by its name relative to the data folder."""
    if data.is_file() and zipfile.is_zipfile(data):

        def from_zip(name: str) -> tuple[str, str]:
            with zipfile.ZipFile(data) as archive:
                members = archive.namelist()
                member = next((m for m in members if m.endswith(f"data/{name}")), None)
                if member is None:
                    raise InputError.at(data, None, f"the archive has no data/{name}")
                return archive.read(member).decode("utf-8"), f"{data}!{member}"

        return from_zip
    folders = [data, data / "data", data / "bfcl_eval" / "data"]
    folder = next((f for f in folders if any(f.glob(f"{PREFIX}*.json"))), None)
    if folder is None:
        raise InputError.at(
            data,
            None,
            f"no {PREFIX}*.json here, in data/ or in bfcl_eval/data/: point --data at "
            "bfcl-eval's data folder, an unpacked bfcl-eval wheel, or the wheel itself "
            "(pip download --no-deps bfcl-eval)",
        )

    def from_folder(name: str) -> tuple[str, str]:
        path = folder / name
        if not path.is_file():
            raise InputError.at(path, None, "missing: this BFCL data folder lacks the file")
        return path.read_text(encoding="utf-8"), str(path)

    return from_folder
