"""fcreplay benchmarks: time `fcreplay check` against a floor and a naive vcrpy baseline.

    python benchmarks/run.py                      sizes 1,000 and 10,000
    python benchmarks/run.py --with-100k          adds 100,000
    python benchmarks/run.py --quick              1,000 only, fewer repeats (a smoke run)
    python benchmarks/run.py --profile            also cProfile `fcreplay check` per size

Suites are generated once by benchmarks/generate.py and cached in
benchmarks/data/<size>/; generation is never part of a timing. Prints a table
and the targets of issue 7, and writes everything to
benchmarks/results/<timestamp>.json. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import generate

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PYTHON = sys.executable
CONFIG = ("--config", "fcreplay.toml")
HEAVY_MODULES = ("jsonschema", "vcr", "yaml", "httpx", "deepdiff")
"""Modules `fcreplay --help` must not import."""
BASELINE_MAX_SIZE = 10_000
"""The vcrpy baseline runs at these sizes and below (it is slow and memory-hungry)."""
RECORD_LATENCY = 0.05
RECORD_CONCURRENCY = (1, 16)
TARGETS_DOC = {
    "check_10k_seconds": ("fcreplay check, 10,000 exchanges: wall time", "<=", 5.0),
    "baseline_over_check_10k": ("naive vcrpy baseline / check, 10,000", ">=", 10.0),
    "check_over_floor_10k": ("check / floor, 10,000", "<=", 20.0),
    "check_100k_seconds": ("fcreplay check, 100,000 exchanges: wall time", "<=", 60.0),
    "check_100k_rss_mb": (
        "fcreplay check, 100,000: peak RSS, largest process (MB)",
        "<=",
        1024.0,
    ),
    "check_100k_tree_mb": (
        "fcreplay check, 100,000: peak memory, all its processes (PSS, MB)",
        "<=",
        1024.0,
    ),
    "check_100k_over_10k": ("check time 100,000 / 10,000", "<=", 12.0),
    "help_seconds": ("fcreplay --help start-up (median)", "<=", 0.25),
    "record_speedup_16": ("recording throughput, concurrency 16 / 1", ">=", 8.0),
}
"""Issue 7's targets (2-core machine): key -> (what, comparison, limit)."""


@dataclass(frozen=True)
class Measured:
    """One child process: wall time, its own peak RSS and CPU time, exit code."""

    seconds: float
    rss_mb: float
    """`ru_maxrss`: the largest single process of the child's tree, never a sum."""
    cpu_seconds: float
    exit_code: int
    tree_pss_mb: float | None = None
    """Sampled peak of the PSS summed over the child and its descendants (`tree=True`)."""
    tree_processes: int | None = None


def run_child(
    command: Sequence[str], *, cwd: Path | None = None, output: Path, tree: bool = False
) -> Measured:
    """Run a command to completion through benchmarks/measure.py (a small launcher that
    takes the child's own rusage with `os.wait4`; see there why it must be small).

    With `tree`, the launcher also samples the memory of the child's whole process tree.
    """
    flags = ["--tree"] if tree else []
    launched = subprocess.run(
        [PYTHON, str(HERE / "measure.py"), *flags, str(output), str(cwd or Path.cwd()), *command],
        capture_output=True,
        text=True,
        check=True,
    )
    return Measured(**json.loads(launched.stdout.strip().splitlines()[-1]))


# --- the measurements -------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import yaml

    return {
        "fcreplay_commit": _commit(),
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pyyaml_libyaml": bool(getattr(yaml, "__with_libyaml__", False)),
    }


def _commit() -> str | None:
    """The repository's HEAD (read only), "+changes" when fcreplay/ differs from it."""
    try:
        head = subprocess.run(
            ["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changes = subprocess.run(
            ["git", "-C", str(HERE.parent), "status", "--porcelain", "--", "fcreplay"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+changes" if changes else "")


def floor(cassettes: Path, runs: int = 3) -> dict[str, Any]:
    """Read every cassette file and parse it (every response body with it); best of `runs`.

    fcreplay cassettes store bodies as parsed JSON inside the cassette document, so
    parsing the file parses every body; the loop touches each response once.
    """
    timings = []
    exchanges = size = 0
    for _ in range(runs):
        started = time.perf_counter()
        exchanges = size = 0
        for path in sorted(cassettes.rglob("*.json")):
            raw = path.read_bytes()
            size += len(raw)
            for interaction in json.loads(raw)["interactions"]:
                response = interaction["response"]
                response.get("parsed_body", response.get("sse"))
                exchanges += 1
        timings.append(time.perf_counter() - started)
    return {"seconds": min(timings), "runs": timings, "exchanges": exchanges, "bytes": size}


def check(folder: Path, scratch: Path, repeat: int) -> dict[str, Any]:
    """`fcreplay check` on a suite in a child process; median wall of `repeat` runs."""
    runs: list[Measured] = []
    attempts = None
    output = scratch / f"check-{folder.name}.txt"
    for _ in range(repeat):
        measured = run_child(
            [PYTHON, "-m", "fcreplay", "check", *CONFIG],
            cwd=folder,
            output=output,
            tree=True,
        )
        runs.append(measured)
        shutil.rmtree(folder / "runs", ignore_errors=True)  # the run log it wrote (large)
        text = output.read_text(encoding="utf-8", errors="replace")
        found = re.search(r"(\d+) attempts replayed", text)
        attempts = int(found.group(1)) if found else None
        summary = text.strip().splitlines()[-1] if text.strip() else ""
    result = _summarize(runs)
    result.update({"attempts": attempts, "summary": summary})
    if any(m.exit_code != 0 for m in runs):
        result["note"] = (
            f"exit code {runs[-1].exit_code}: the check did not pass on the generated suite "
            "(stale cache? rerun with --regenerate); output in " + str(output)
        )
    return result


def _summarize(runs: list[Measured]) -> dict[str, Any]:
    median = statistics.median(m.seconds for m in runs)
    return {
        "seconds": median,
        "runs": [m.seconds for m in runs],
        "rss_mb": max(m.rss_mb for m in runs),
        "tree_pss_mb": max((m.tree_pss_mb or 0.0) for m in runs),
        "tree_processes": max((m.tree_processes or 0) for m in runs),
        "cpu_seconds": statistics.median(m.cpu_seconds for m in runs),
        "exit_code": runs[-1].exit_code,
    }


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
    result = _summarize(runs)
    result.update({"inner": inner, "conversion_seconds": conversion["seconds"]})
    result["yaml_bytes"] = conversion["yaml_bytes"]
    return result


def startup(runs: int) -> dict[str, Any]:
    """`fcreplay --help` wall time (median of child runs) and what it imports."""
    timings = []
    scratch = Path(tempfile.mkdtemp(prefix="fcreplay-help-"))
    try:
        for _ in range(runs):
            measured = run_child([PYTHON, "-m", "fcreplay", "--help"], output=scratch / "help.txt")
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


def record_benchmark(size: int, seed: int, wanted: int, repeat: int = 1) -> dict[str, Any]:
    """Record the first cases of a suite (about `wanted` exchanges) over real HTTP.

    The simulator runs in this process (`running_simulator`, latency per answer), the
    recorder in a child (benchmarks/record_worker.py, timing `record` alone). With
    `repeat`, each concurrency runs that many times and the median run is kept.
    """
    cases, _ = generate.build_cases(size, seed)
    chosen: list[str] = []
    planned = 0
    for built in cases:
        chosen.append(built.line["id"])
        planned += generate.planned_exchanges(built)
        if planned >= wanted:
            break
    result: dict[str, Any] = {
        "suite": size,
        "cases": chosen,
        "latency": RECORD_LATENCY,
        "planned_exchanges": planned,
        "runs": {},
    }
    for concurrency in RECORD_CONCURRENCY:
        runs = [_record_once(size, seed, chosen, concurrency) for _ in range(repeat)]
        runs.sort(key=lambda run: float(run["seconds"]))
        kept = runs[len(runs) // 2]
        kept["repeats_seconds"] = [run["seconds"] for run in runs]
        result["runs"][str(concurrency)] = kept
    one, many = (result["runs"][str(c)] for c in RECORD_CONCURRENCY)
    result["speedup"] = many["exchanges_per_second"] / one["exchanges_per_second"]
    return result


def _record_once(size: int, seed: int, chosen: list[str], concurrency: int) -> dict[str, Any]:
    """One recording run into a fresh folder, from a fresh simulator; checks its run log."""
    from fcreplay.engine.plan import plan_units
    from fcreplay.inputs.suite import load_suite
    from fcreplay.runlog import read_run_log
    from fcreplay.simulator.server import running_simulator

    folder = generate.data_dir(size)
    with tempfile.TemporaryDirectory(prefix="fcreplay-record-") as scratch_name:
        scratch = Path(scratch_name)
        with running_simulator(folder / "simulator.json", latency=RECORD_LATENCY) as url:
            config = scratch / "fcreplay.toml"
            config.write_text(
                generate.config_toml(size, seed, simulator_url=url, inputs=folder),
                encoding="utf-8",
            )
            output = scratch / "record.txt"
            simulator_cpu = time.process_time()  # this process now only runs the simulator
            worker = [str(HERE / "record_worker.py"), str(config), str(concurrency), *chosen]
            measured = run_child([PYTHON, *worker], output=output)
            simulator_cpu = time.process_time() - simulator_cpu
        text = output.read_text(encoding="utf-8", errors="replace").strip()
        if measured.exit_code != 0:
            raise RuntimeError(f"recording at concurrency {concurrency} failed:\n{text}")
        inner = json.loads(text.splitlines()[-1])
        suite = load_suite(config)
        order = [
            (u.target.name, u.variant, u.case.id, n)
            for u in plan_units(suite, case_ids=chosen)
            for n in range(1, suite.config.repetitions + 1)
        ]
        records = read_run_log(Path(inner["log"])).records
        keys = [r.key for r in records]
        stats = generate.cassette_stats(scratch / "cassettes")
    seconds = float(inner["seconds"])
    return {
        "seconds": seconds,
        "process_seconds": measured.seconds,
        "attempts": len(records),
        "exchanges": stats["exchanges"],
        "attempts_per_second": len(records) / seconds,
        "exchanges_per_second": stats["exchanges"] / seconds,
        "errors": sum(r.verdict == "error" for r in records),
        "recorder_cpu_seconds": measured.cpu_seconds,
        "simulator_cpu_seconds": simulator_cpu,
        "cpu_busy": (measured.cpu_seconds + simulator_cpu) / measured.seconds,
        "log_complete": sorted(keys) == sorted(order) and len(set(keys)) == len(keys),
        "log_in_plan_order": keys == order,
    }


def profile_check(folder: Path, scratch: Path, top: int = 15) -> dict[str, str]:
    """cProfile `fcreplay check --jobs 1` on a suite: top entries by cumulative and self time.

    One process, because cProfile only reports the process it runs in, not the replay
    workers; the profile shows the work per exchange, not the wall time of a default run.
    """
    target = scratch / f"check-{folder.name}.prof"
    command = [PYTHON, "-m", "cProfile", "-o", str(target), "-m", "fcreplay", "check"]
    run_child([*command, *CONFIG, "--jobs", "1"], cwd=folder, output=scratch / "profile.txt")
    shutil.rmtree(folder / "runs", ignore_errors=True)
    return _top_entries(target, top)


def profile_record(size: int, seed: int, scratch: Path, top: int = 15) -> dict[str, str]:
    """cProfile the recorder at concurrency 1 (its work per exchange; threads are not profiled)."""
    from fcreplay.simulator.server import running_simulator

    folder = generate.data_dir(size)
    cases, _ = generate.build_cases(size, seed)
    chosen = [built.line["id"] for built in cases[:2]]
    target = scratch / "record.prof"
    work = scratch / "record-profile"
    work.mkdir()
    with running_simulator(folder / "simulator.json", latency=RECORD_LATENCY) as url:
        config = work / "fcreplay.toml"
        config.write_text(
            generate.config_toml(size, seed, simulator_url=url, inputs=folder), encoding="utf-8"
        )
        worker = [str(HERE / "record_worker.py"), str(config), "1", *chosen]
        run_child([PYTHON, "-m", "cProfile", "-o", str(target), *worker], output=work / "out.txt")
    return _top_entries(target, top)


def _top_entries(target: Path, top: int) -> dict[str, str]:
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


# --- report ---------------------------------------------------------------------------------


def evaluate(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each of issue 7's targets that this run measured: value, limit, held or not."""
    values: dict[str, float] = {}
    sizes = results["sizes"]
    ten = sizes.get("10000")
    if ten is not None:
        values["check_10k_seconds"] = ten["check"]["seconds"]
        values["check_over_floor_10k"] = ten["ratios"]["check_over_floor"]
        if "baseline_over_check" in ten["ratios"]:
            values["baseline_over_check_10k"] = ten["ratios"]["baseline_over_check"]
    hundred = sizes.get("100000")
    if hundred is not None:
        values["check_100k_seconds"] = hundred["check"]["seconds"]
        values["check_100k_rss_mb"] = hundred["check"]["rss_mb"]
        if hundred["check"].get("tree_pss_mb"):
            values["check_100k_tree_mb"] = hundred["check"]["tree_pss_mb"]
        if ten is not None:
            values["check_100k_over_10k"] = hundred["check"]["seconds"] / ten["check"]["seconds"]
    values["help_seconds"] = results["help"]["seconds"]
    if results.get("record") and not results.get("quick"):
        # a --quick recording (one case, ~30 units) is too small to judge a scaling target
        values["record_speedup_16"] = results["record"]["speedup"]
    verdicts = {}
    for key, value in values.items():
        what, comparison, limit = TARGETS_DOC[key]
        held = value <= limit if comparison == "<=" else value >= limit
        verdicts[key] = {
            "what": what,
            "value": value,
            "limit": f"{comparison} {limit:g}",
            "held": held,
        }
    return verdicts


def render(results: dict[str, Any]) -> str:
    """The plain-text (and Markdown-friendly) table of one run."""
    m = results["machine"]
    lines = [
        f"machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']} "
        f"(PyYAML with libyaml: {m['pyyaml_libyaml']}); fcreplay at {m['fcreplay_commit']}",
        "",
        "| exchanges | attempts | cassettes | check s | check CPU s | check peak RSS MB "
        "(largest process) | check peak PSS MB (all processes) | floor s | vcrpy baseline s | "
        "check / floor | baseline / check |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for data in results["sizes"].values():
        check_ = data["check"]
        base = data.get("baseline")
        ratios = data["ratios"]
        lines.append(
            f"| {data['exchanges']:,} | {check_['attempts'] or '?':,} | {data['cassettes']:,} | "
            f"{check_['seconds']:.2f} | {check_['cpu_seconds']:.1f} | {check_['rss_mb']:.0f} | "
            f"{check_['tree_pss_mb']:.0f} ({check_['tree_processes']}) | "
            f"{data['floor']['seconds']:.3f} | "
            + (f"{base['seconds']:.2f}" if base else "not run")
            + f" | {ratios['check_over_floor']:.1f}x | "
            + (f"{ratios['baseline_over_check']:.2f}x" if base else "-")
            + " |"
        )
    help_ = results["help"]
    lines += [
        "",
        f"fcreplay --help: {help_['seconds'] * 1000:.0f} ms median of {len(help_['runs'])} "
        f"(bare `python -c pass`: {help_['python_baseline_seconds'] * 1000:.0f} ms); "
        f"heavy modules imported: {', '.join(help_['heavy_imported']) or 'none'}; "
        f"third-party: {', '.join(help_['third_party_imported']) or 'none'}",
    ]
    record = results.get("record")
    if record:
        lines += [
            "",
            f"recording the first {len(record['cases'])} case(s) of the {record['suite']:,} suite "
            "over HTTP "
            f"(simulator latency {record['latency'] * 1000:.0f} ms per answer):",
            "",
            "| concurrency | attempts | exchanges | record s | attempts/s | exchanges/s | "
            "CPUs busy | log complete | log in plan order |",
            "|---:|---:|---:|---:|---:|---:|---:|---|---|",
        ]
        for concurrency, run in record["runs"].items():
            lines.append(
                f"| {concurrency} | {run['attempts']} | {run['exchanges']} | "
                f"{run['seconds']:.2f} | {run['attempts_per_second']:.1f} | "
                f"{run['exchanges_per_second']:.1f} | "
                f"{run['cpu_busy']:.2f} | {'yes' if run['log_complete'] else 'NO'} | "
                f"{'yes' if run['log_in_plan_order'] else 'NO'} |"
            )
        lines.append(f"\nthroughput speed-up at concurrency 16: {record['speedup']:.1f}x")
        if results.get("quick"):
            lines.append("(--quick: too few units to judge the 8x target; run without --quick)")
    lines += ["", "| target | measured | limit | held |", "|---|---:|---:|---|"]
    for verdict in results["targets"].values():
        lines.append(
            f"| {verdict['what']} | {verdict['value']:.2f} | {verdict['limit']} | "
            f"{'yes' if verdict['held'] else 'NO'} |"
        )
    notes = [
        f"size {size}: {data['check']['note']}"
        for size, data in results["sizes"].items()
        if "note" in data["check"]
    ]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Time fcreplay check against a floor and a naive vcrpy baseline."
    )
    parser.add_argument(
        "--sizes",
        default="1000,10000",
        help="comma-separated exchange counts (default: %(default)s)",
    )
    parser.add_argument("--with-100k", action="store_true", help="add the 100,000 suite")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1,000 only, fewer repeats, smaller recording",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="runs per measurement, median taken (default: check and baseline 3 times up to "
        "1,000 exchanges, else once; recording once)",
    )
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument("--regenerate", action="store_true", help="ignore cached suites")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="reuse cached suites of this generator version and seed even when the fcreplay "
        "code that recorded them changed (default: regenerate then)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the check at each size")
    parser.add_argument("--no-record", action="store_true", help="skip the recording benchmark")
    options = parser.parse_args(argv)

    sizes = [1000] if options.quick else [int(s) for s in options.sizes.split(",") if s.strip()]
    if options.with_100k and 100_000 not in sizes:
        sizes.append(100_000)
    sizes.sort()
    help_runs = 3 if options.quick else 9
    record_wanted = 60 if options.quick else 200

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    results: dict[str, Any] = {
        "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "seed": options.seed,
        "generator_version": generate.GENERATOR_VERSION,
        "quick": options.quick,
        "sizes": {},
    }
    manifests = {
        size: generate.ensure_suite(
            size, options.seed, force=options.regenerate, reuse=options.reuse, log=log
        )
        for size in sizes
    }
    results["generation_seconds"] = time.perf_counter() - started
    scratch = Path(tempfile.mkdtemp(prefix="fcreplay-bench-"))
    try:
        for size in sizes:
            folder = generate.data_dir(size)
            manifest = manifests[size]
            log(f"size {size}: floor ...")
            data: dict[str, Any] = {
                "exchanges": manifest["exchanges"],
                "streamed": manifest["streamed"],
                "cassettes": manifest["cassettes"],
                "cases": manifest["cases"],
                "floor": floor(folder / "cassettes"),
            }
            log(f"size {size}: fcreplay check ...")
            repeat = options.repeat or (3 if size <= 1000 else 1)
            data["check"] = check(folder, scratch, repeat)
            ratios = {"check_over_floor": data["check"]["seconds"] / data["floor"]["seconds"]}
            if size <= BASELINE_MAX_SIZE:
                log(f"size {size}: naive vcrpy baseline ...")
                data["baseline"] = baseline(folder, scratch, repeat)
                ratios["baseline_over_check"] = (
                    data["baseline"]["seconds"] / data["check"]["seconds"]
                )
            data["ratios"] = ratios
            if options.profile:
                log(f"size {size}: profiling fcreplay check --jobs 1 ...")
                data["profile"] = profile_check(folder, scratch)
            results["sizes"][str(size)] = data
        log("fcreplay --help start-up ...")
        results["help"] = startup(help_runs)
        if not options.no_record:
            log("recording against the simulator ...")
            results["record"] = record_benchmark(
                sizes[0], options.seed, record_wanted, options.repeat or 1
            )
            if options.profile:
                log("profiling the recorder at concurrency 1 ...")
                results["record"]["profile"] = profile_record(sizes[0], options.seed, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results["targets"] = evaluate(results)
    results["total_seconds"] = time.perf_counter() - started
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{results['timestamp'].replace(':', '')}.json"
    path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(render(results))
    for size, data in results["sizes"].items():
        for order, text in data.get("profile", {}).items():
            print(f"\nprofile of `fcreplay check --jobs 1`, {int(size):,} exchanges, by {order}:")
            print(text)
    for order, text in (results.get("record") or {}).get("profile", {}).items():
        print(f"\nprofile of recording at concurrency 1, by {order}:\n{text}")
    print(
        f"\nresults: {path} (generation {results['generation_seconds']:.0f} s, "
        f"total {results['total_seconds']:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
