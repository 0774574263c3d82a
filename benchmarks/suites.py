"""Per-size figures: the floor, `fcreplay check`, the naive vcrpy baseline, and a profile.

Each takes a generated suite folder (benchmarks/data/<size>/).
"""

from __future__ import annotations

import io
import json
import pstats
import re
import shutil
import time
from pathlib import Path
from typing import Any

from calls import adapter_of, response_calls
from common import CONFIG, HERE, PYTHON, Measured, fcreplay, run_child, summarize


def floor(cassettes: Path, runs: int = 3) -> dict[str, Any]:
    """Read every cassette file, parse it and extract every answer's calls; best of `runs`.

    The least a check must do with the standard library: fcreplay cassettes store
    bodies as parsed JSON inside the cassette document, so parsing the file parses
    every body; the calls (name and parsed arguments) are then read from each answer,
    streamed ones by joining their events (`calls.response_calls`).
    """
    timings = []
    exchanges = size = found = files = 0
    for _ in range(runs):
        started = time.perf_counter()
        exchanges = size = found = files = 0
        for path in sorted(cassettes.rglob("*.json")):
            raw = path.read_bytes()
            size += len(raw)
            files += 1
            document = json.loads(raw)
            adapter = (document.get("fcreplay") or {}).get("adapter")
            for interaction in document["interactions"]:
                api = adapter or adapter_of(interaction["request"]["uri"])
                found += len(response_calls(api, interaction["response"]))
                exchanges += 1
        timings.append(time.perf_counter() - started)
    return {
        "seconds": min(timings),
        "runs": timings,
        "exchanges": exchanges,
        "calls": found,
        "files": files,
        "bytes": size,
    }


def check(folder: Path, scratch: Path, repeat: int, *, no_cache: bool = False) -> dict[str, Any]:
    """`fcreplay check` on a suite in a child process (`--no-cache` when the CLI has it, so
    every run is cold); median wall of `repeat` runs."""
    runs: list[Measured] = []
    attempts = None
    summary = ""
    output = scratch / f"check-{folder.name}.txt"
    flags = ["--no-cache"] if no_cache else []
    for _ in range(repeat):
        measured = run_child(
            fcreplay("check", *CONFIG, *flags),
            cwd=folder,
            output=output,
            errors=scratch / "check-progress.txt",
            tree=True,
        )
        runs.append(measured)
        shutil.rmtree(folder / "runs", ignore_errors=True)  # the run log it wrote (large)
        text = output.read_text(encoding="utf-8", errors="replace")
        found = re.search(r"(\d+) attempts replayed", text)
        attempts = int(found.group(1)) if found else None
        summary = text.strip().splitlines()[-1] if text.strip() else ""
    result = summarize(runs)
    result.update({"attempts": attempts, "summary": summary, "no_cache": no_cache})
    if any(m.exit_code != 0 for m in runs):
        result["note"] = (
            f"exit code {runs[-1].exit_code}: the check did not pass on the generated suite "
            "(stale cache? rerun with --regenerate); output in " + str(output)
        )
    return result


def convert_for_vcrpy(folder: Path) -> dict[str, Any]:
    """Write every cassette as vcrpy YAML (its default serializer) once, plus the request list.

    Cached in <folder>/vcrpy/ with a marker naming the generation it was made from.
    """
    from vcr.serializers import yamlserializer

    from fcreplay.cassettes.store import SERIALIZER

    target = folder / "vcrpy"
    marker = target / "converted.json"
    key = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["generation_id"]
    if marker.is_file() and json.loads(marker.read_text(encoding="utf-8")).get("key") == key:
        return dict(json.loads(marker.read_text(encoding="utf-8")), cached=True)
    shutil.rmtree(target, ignore_errors=True)
    started = time.perf_counter()
    plan: dict[str, list[list[Any]]] = {}
    size = 0
    cassettes = folder / "cassettes"
    for path in sorted(cassettes.rglob("*.json")):
        cassette = SERIALIZER.deserialize(path.read_text(encoding="utf-8"))
        name = str(path.relative_to(cassettes).with_suffix(".yaml"))
        text = yamlserializer.serialize(cassette)
        size += len(text.encode("utf-8"))
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(text, encoding="utf-8")
        plan[name] = [
            [
                item["request"]["method"],
                item["request"]["uri"],
                {name: values[0] for name, values in item["request"]["headers"].items()},
                item["request"]["body"],
            ]
            for item in cassette["interactions"]
        ]
    (target / "requests.json").write_text(json.dumps(plan, ensure_ascii=False), encoding="utf-8")
    info = {"key": key, "seconds": time.perf_counter() - started, "yaml_bytes": size}
    marker.write_text(json.dumps(info), encoding="utf-8")
    return dict(info, cached=False)


def baseline(folder: Path, scratch: Path, repeat: int) -> dict[str, Any]:
    """The naive vcrpy replay (benchmarks/naive_vcrpy.py) in a child process."""
    conversion = convert_for_vcrpy(folder)
    runs: list[Measured] = []
    inner: dict[str, Any] = {}
    output = scratch / f"baseline-{folder.name}.txt"
    for _ in range(repeat):
        runs.append(
            run_child(
                [
                    PYTHON,
                    str(HERE / "naive_vcrpy.py"),
                    str(folder / "vcrpy"),
                    str(folder / "vcrpy" / "requests.json"),
                ],
                output=output,
                tree=True,
            )
        )
        text = output.read_text(encoding="utf-8", errors="replace").strip()
        try:
            inner = json.loads(text.splitlines()[-1])
        except (ValueError, IndexError):
            inner = {"error": text[-2000:]}
    result = summarize(runs)
    result.update({"inner": inner, "conversion_seconds": conversion["seconds"]})
    result["yaml_bytes"] = conversion["yaml_bytes"]
    return result


def profile_check(folder: Path, scratch: Path, top: int = 15) -> dict[str, str]:
    """cProfile `fcreplay check --jobs 1` on a suite: top entries by cumulative and self time.

    One process, because cProfile only reports the process it runs in, not the replay
    workers; the profile shows the work per exchange, not the wall time of a default run.
    """
    target = scratch / f"check-{folder.name}.prof"
    command = [PYTHON, "-m", "cProfile", "-o", str(target), "-m", "fcreplay", "check"]
    run_child([*command, *CONFIG, "--jobs", "1"], cwd=folder, output=scratch / "profile.txt")
    shutil.rmtree(folder / "runs", ignore_errors=True)
    return top_entries(target, top)


def top_entries(target: Path, top: int) -> dict[str, str]:
    """The top of a saved profile, by cumulative and by self time."""
    texts = {}
    for order in ("cumulative", "tottime"):
        stream = io.StringIO()
        stats = pstats.Stats(str(target), stream=stream)
        stats.strip_dirs().sort_stats(order).print_stats(top)
        texts[order] = _trim_profile(stream.getvalue())
    return texts


def _trim_profile(text: str) -> str:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    return "\n".join(line.rstrip() for line in lines[start:] if line.strip())
