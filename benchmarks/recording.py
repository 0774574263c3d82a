"""Recording throughput: part of a suite recorded over HTTP from the simulator at concurrency
1 and 16 (the recorder in a child, `record_worker.py`; the simulator in this process)."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import generate
from common import HERE, PYTHON, run_child
from suites import top_entries

RECORD_LATENCY = 0.05
RECORD_CONCURRENCY = (1, 16)


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
    return top_entries(target, top)
