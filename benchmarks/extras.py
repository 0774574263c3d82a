"""Figures beside the suites: start-up, the repository's example check, bytes per exchange,
and `fcreplay inspect` over the shared corpus."""

from __future__ import annotations

import glob
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import PYTHON, REPO, fcreplay, run_child

HEAVY_MODULES = ("jsonschema", "vcr", "yaml", "httpx", "deepdiff")
"""Modules `fcreplay --help` must not import."""
CORPUS = Path("/work/shared/corpus")
EXAMPLE_RUNS = 5


def startup(runs: int) -> dict[str, Any]:
    """`fcreplay --help` wall time (median of child runs) and what it imports."""
    timings = []
    scratch = Path(tempfile.mkdtemp(prefix="fcreplay-help-"))
    try:
        for _ in range(runs):
            measured = run_child(fcreplay("--help"), output=scratch / "help.txt")
            timings.append(measured.seconds)
    finally:
        shutil.rmtree(scratch)
    probe = (
        "import contextlib, io, json, sys\n"
        "from fcreplay.cli import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    run(['--help'])\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    modules: list[str] = json.loads(
        subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, check=True).stdout
    )
    tops = sorted({name.split(".")[0] for name in modules})
    third_party = [
        name
        for name in tops
        if name not in sys.stdlib_module_names and not name.startswith("_") and name != "fcreplay"
    ]
    return {
        "seconds": statistics.median(timings),
        "runs": timings,
        "python_baseline_seconds": _bare_python(runs),
        "heavy_imported": [name for name in HEAVY_MODULES if name in tops],
        "third_party_imported": third_party,
        "modules": len(modules),
    }


def _bare_python(runs: int) -> float:
    """Median wall time of `python -c pass`: the interpreter's own share of start-up."""
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([PYTHON, "-c", "pass"], check=True)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def example_check(scratch: Path, no_cache: bool, runs: int = EXAMPLE_RUNS) -> dict[str, Any]:
    """`python -m fcreplay check` in the repository root (its example suite), as a user types
    it: median wall of `runs` child runs; with an incremental cache, also `--no-cache`.

    The run logs these checks write into the repository's runs/ are removed again.
    """
    runs_folder = REPO / "runs"
    before = set(runs_folder.glob("*")) if runs_folder.is_dir() else set()
    result: dict[str, Any] = {}
    variants = {"plain": []} | ({"no_cache": ["--no-cache"]} if no_cache else {})
    try:
        for name, flags in variants.items():
            timings, codes = [], []
            for _ in range(runs):
                measured = run_child(
                    fcreplay("check", *flags), cwd=REPO, output=scratch / "example.txt"
                )
                timings.append(measured.seconds)
                codes.append(measured.exit_code)
            text = (scratch / "example.txt").read_text(encoding="utf-8", errors="replace")
            result[name] = {
                "seconds": statistics.median(timings),
                "runs": timings,
                "exit_codes": codes,
                "summary": text.strip().splitlines()[-1] if text.strip() else "",
            }
    finally:
        if runs_folder.is_dir():
            for path in set(runs_folder.glob("*")) - before:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
    result["seconds"] = result["plain"]["seconds"]
    return result


def bytes_per_exchange(cassettes: Path, exchanges: int | None = None) -> dict[str, Any]:
    """Every byte under a cassette folder over its exchanges (recorded interactions).

    `exchanges` is taken from the caller when known (a generated suite's manifest);
    otherwise counted from the cassettes' `interactions`.
    """
    files = [path for path in cassettes.rglob("*") if path.is_file()]
    size = sum(path.stat().st_size for path in files)
    if exchanges is None:
        exchanges = 0
        for path in files:
            if path.suffix == ".json":
                exchanges += len(json.loads(path.read_bytes()).get("interactions", []))
    return {
        "folder": str(cassettes),
        "files": len(files),
        "bytes": size,
        "exchanges": exchanges,
        "kb_per_exchange": size / exchanges / 1000 if exchanges else None,
    }


def inspect_corpus(scratch: Path, runs: int = 3) -> dict[str, Any]:
    """`fcreplay inspect --format json /work/shared/corpus/*/*`: median wall, files, output."""
    if not CORPUS.is_dir():
        return {"available": False, "note": f"{CORPUS} is absent"}
    files = sorted(glob.glob(str(CORPUS / "*" / "*")))
    output = scratch / "inspect.json"
    timings, code = [], 0
    for _ in range(runs):
        measured = run_child(
            fcreplay("inspect", "--format", "json", *files),
            output=output,
            errors=scratch / "inspect-err.txt",
        )
        timings.append(measured.seconds)
        code = measured.exit_code
    lines = output.read_text(encoding="utf-8", errors="replace").splitlines()
    exchanges = sum(1 for line in lines if line.startswith("{"))
    return {
        "available": True,
        "files": len(files),
        "seconds": statistics.median(timings),
        "runs": timings,
        "exit_code": code,
        "exchanges": exchanges,
        "output_bytes": output.stat().st_size,
    }
