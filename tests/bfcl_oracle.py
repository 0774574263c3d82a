"""BFCL's own AST checker as an oracle, and model outputs generated from its possible answers.

The checker comes from the bfcl-eval wheel (Apache-2.0), obtained with
`pip download --no-deps bfcl-eval==2026.3.23` into a cache folder under the system's
temporary folder (or named by FCREPLAY_BFCL_WHEEL); nothing of it is kept in this
repository. Its `ast_checker` module needs only the standard library once the
package's `__init__` files (which import every model handler) are skipped and its
model table is stubbed with one model that, like the function-calling models, turns
dots in function names into underscores.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import random
import subprocess
import sys
import tempfile
import types
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BFCL_VERSION = "2026.3.23"
ORACLE_MODEL = "fcreplay_oracle"
"""BFCL reads model names with `_` as `/`: this one is `fcreplay/oracle` in its table."""
CACHE = Path(tempfile.gettempdir()) / "fcreplay-bfcl"

Output = list[dict[str, dict[str, Any]]]
"""A decoded model output as BFCL's checker takes it: [{function: {param: value}}]."""


def obtain_wheel() -> Path | None:
    """The bfcl-eval wheel: FCREPLAY_BFCL_WHEEL, the cache, or pip download; None if none."""
    named = os.environ.get("FCREPLAY_BFCL_WHEEL")
    if named and Path(named).is_file():
        return Path(named)
    pattern = f"bfcl_eval-{BFCL_VERSION}-*.whl"
    found = sorted(CACHE.glob(pattern))
    if not found:
        CACHE.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
        command += [f"bfcl-eval=={BFCL_VERSION}", "--dest", str(CACHE)]
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=300)
        except (OSError, subprocess.SubprocessError):
            return None
        found = sorted(CACHE.glob(pattern))
    return found[0] if found else None


@dataclass(frozen=True)
class Oracle:
    """BFCL's verdict on an output: its AST checker, or its relevance rule."""

    ast_checker: Callable[..., dict[str, Any]]
    python: Any

    def valid(self, category: str, entry: dict[str, Any], truth: Any, output: Output) -> bool:
        """BFCL's verdict; irrelevance entries pass when the output has no call."""
        if "irrelevance" in category:
            return not output  # BFCL's relevance runner: success when nothing decodes
        names = [{name.replace(".", "_"): args for name, args in item.items()} for item in output]
        result = self.ast_checker(
            entry["function"], names, truth, self.python, category, ORACLE_MODEL
        )
        return bool(result["valid"])


def load_oracle(wheel: Path) -> Oracle:
    """Import BFCL's ast_checker from the wheel without running its package __init__s."""
    unpacked = CACHE / f"unpacked-{BFCL_VERSION}"
    if not (unpacked / "bfcl_eval" / "eval_checker").is_dir():
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(unpacked)
    root = unpacked / "bfcl_eval"
    saved = {name: module for name, module in sys.modules.items() if name.startswith("bfcl_eval")}
    try:
        for name, folder in (
            ("bfcl_eval", root),
            ("bfcl_eval.constants", root / "constants"),
            ("bfcl_eval.eval_checker", root / "eval_checker"),
            ("bfcl_eval.eval_checker.ast_eval", root / "eval_checker" / "ast_eval"),
            (
                "bfcl_eval.eval_checker.ast_eval.type_convertor",
                root / "eval_checker" / "ast_eval" / "type_convertor",
            ),
        ):
            package = types.ModuleType(name)
            package.__path__ = [str(folder)]
            sys.modules[name] = package
        table = types.ModuleType("bfcl_eval.constants.model_config")
        oracle_model = types.SimpleNamespace(underscore_to_dot=True)
        table.MODEL_CONFIG_MAPPING = {ORACLE_MODEL.replace("_", "/"): oracle_model}  # type: ignore[attr-defined]
        sys.modules[table.__name__] = table
        checker = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
        enums = importlib.import_module("bfcl_eval.constants.enums")
    finally:
        for name in [n for n in sys.modules if n.startswith("bfcl_eval")]:
            del sys.modules[name]
        sys.modules.update(saved)
    return Oracle(checker.ast_checker, enums.Language.PYTHON)


def read_category(data: Path, category: str) -> list[tuple[dict[str, Any], Any]]:
    """(entry, ground truth or None) of one category, from an unpacked data folder."""
    entries = _jsonl(data / f"BFCL_v4_{category}.json")
    answers_path = data / "possible_answer" / f"BFCL_v4_{category}.json"
    truth = (
        {a["id"]: a["ground_truth"] for a in _jsonl(answers_path)} if answers_path.is_file() else {}
    )
    return [(entry, truth.get(entry["id"])) for entry in entries]


def data_folder(wheel: Path) -> Path:
    """The data folder inside the unpacked wheel (load_oracle unpacks it)."""
    return CACHE / f"unpacked-{BFCL_VERSION}" / "bfcl_eval" / "data"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


# --- outputs from the possible answers ---------------------------------------------------

PERTURBATIONS = (
    "value",
    "case",
    "int_float",
    "stringify",
    "drop",
    "extra",
    "null",
    "name",
    "count",
    "order",
)


def outputs(
    entry: dict[str, Any], truth: Any, rng: random.Random, perturbed: int
) -> Iterator[tuple[str, Output]]:
    """("correct", output) then `perturbed` (kind, output) pairs for one entry."""
    functions = {f["name"]: f for f in entry["function"]}
    if truth is None:  # irrelevance: the right output is no call
        yield "correct", []
        for _ in range(perturbed if entry["function"] else 0):
            function = rng.choice(entry["function"])
            required = function["parameters"].get("required", [])
            yield "call", [{function["name"]: dict.fromkeys(required, "x")}]
        return
    base = [_realise_call(call, functions, rng) for call in truth]
    if len(base) > 1:
        rng.shuffle(base)  # BFCL's parallel checker takes the calls in any order
    yield "correct", base
    for _ in range(perturbed):
        kind = rng.choice(PERTURBATIONS)
        yield kind, _perturb(kind, copy.deepcopy(base), functions, rng)


def _realise_call(
    call: dict[str, Any], functions: dict[str, Any], rng: random.Random
) -> dict[str, Any]:
    ((name, answers),) = call.items()
    properties = functions.get(name, {}).get("parameters", {}).get("properties", {})
    arguments = {}
    for param, possible in answers.items():
        choice = rng.choice(possible) if possible else ""  # no answer at all: leave it out
        if choice == "":
            continue
        arguments[param] = _realise(choice, properties.get(param, {}), rng)
    return {name: arguments}


def _realise(choice: Any, doc: dict[str, Any], rng: random.Random) -> Any:
    """A value from one possible answer: dict answers hold per-key answer lists."""
    kind = doc.get("type")
    if kind == "dict" and isinstance(choice, dict):
        return _realise_dict(choice, rng)
    items = doc.get("items", {})
    if kind in ("array", "tuple") and items.get("type") == "dict" and isinstance(choice, list):
        return [_realise_dict(d, rng) if isinstance(d, dict) else d for d in choice]
    return copy.deepcopy(choice)


def _realise_dict(answer: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    value = {}
    for key, possible in answer.items():
        choice = rng.choice(possible) if isinstance(possible, list) and possible else possible
        if choice != "":
            value[key] = copy.deepcopy(choice)
    return value


def _perturb(kind: str, output: Output, functions: dict[str, Any], rng: random.Random) -> Output:
    call = rng.choice(output)
    ((name, arguments),) = call.items()
    params = sorted(arguments)
    param = rng.choice(params) if params else None
    if kind == "name":
        others = [n for n in functions if n != name]
        call.pop(name)
        call[rng.choice(others) if others and rng.random() < 0.5 else name + "_v2"] = arguments
    elif kind == "count":
        if len(output) > 1 and rng.random() < 0.5:
            output.remove(call)
        else:
            output.append(copy.deepcopy(call))
    elif kind == "order":
        output.reverse()
    elif kind == "extra":
        declared = functions.get(name, {}).get("parameters", {}).get("properties", {})
        unused = [p for p in declared if p not in arguments]
        arguments[rng.choice(unused) if unused and rng.random() < 0.5 else "unexpected_param"] = "x"
    elif param is None:
        arguments["unexpected_param"] = 1
    elif kind == "drop":
        del arguments[param]
    elif kind == "null":
        arguments[param] = None
    else:
        arguments[param] = _changed(kind, arguments[param], rng)
    return output


def _changed(kind: str, value: Any, rng: random.Random) -> Any:
    if kind == "case" and isinstance(value, str):
        return rng.choice(
            [value.upper(), value.title(), value.replace(" ", "-"), value + ".", " " + value]
        )
    if kind == "int_float" and not isinstance(value, bool):
        if isinstance(value, int):
            return float(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
    if kind == "stringify" and not isinstance(value, str):
        return json.dumps(value) if not isinstance(value, bool) else str(value).lower()
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([1, -1, 7])
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return value + " extra" if value else "extra"
    if isinstance(value, list):
        return value[:-1] if value and rng.random() < 0.5 else [*value, value[0] if value else 1]
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        return {k: v for k, v in value.items() if k != key}
    return "changed"
