"""fcreplay benchmarks: issue 17's figures and targets (and the per-size figures of issue 7).

    python benchmarks/run.py                      sizes 1,000 and 10,000, every measurement
    python benchmarks/run.py --with-100k          adds 100,000 (memory and growth targets)
    python benchmarks/run.py --quick              1,000 only, fewer repeats (a smoke run)
    python benchmarks/run.py --only plugin,proxy  some measurements only (see --help)
    python benchmarks/run.py --profile            also cProfile `fcreplay check` per size

Suites are generated once by benchmarks/generate.py and cached in
benchmarks/data/<size>/; generation is never part of a timing. Progress goes to
stderr; the report (Markdown) to stdout, ending with the targets table; every
figure to benchmarks/results/<timestamp>.json. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import extras
import generate
import incremental
import plugin_overhead
import proxy_bench
import recording
import sdk_anchor
import suites
from common import (
    REPO,
    RESULTS,
    OtherLoad,
    features,
    load_average,
    log,
    machine,
    wait_until_idle,
)
from report import render
from targets import evaluate

SECTIONS = {
    "check": "per size: floor, cold `fcreplay check`, naive vcrpy baseline",
    "incremental": "cold / warm / one-changed checks of the reference suite, shards + merge",
    "anchor": "pytest-recording + official SDKs over the reference suite",
    "plugin": "per-test overhead of the pytest plugin and of pytest-recording",
    "proxy": "proxy replay throughput with 16 clients",
    "example": "`fcreplay check` of the repository's example suite",
    "bytes": "bytes per exchange of the example suite and the reference suite",
    "inspect": "`fcreplay inspect` over /work/shared/corpus",
    "help": "`fcreplay --help` start-up",
    "record": "recording throughput at concurrency 1 and 16",
}
ALIASES = {"shard": "incremental", "cache": "incremental", "warm": "incremental"}
NEEDS_REFERENCE = ("incremental", "anchor", "proxy", "bytes")
BASELINE_MAX_SIZE = 10_000
"""The vcrpy baseline runs at these sizes and below (it is slow and memory-hungry)."""


def _sections(only: str | None, skip: str | None) -> list[str]:
    def names(text: str) -> set[str]:
        chosen = {ALIASES.get(n.strip(), n.strip()) for n in text.split(",") if n.strip()}
        unknown = chosen - set(SECTIONS)
        if unknown:
            raise SystemExit(f"unknown measurement(s): {', '.join(sorted(unknown))}")
        return chosen

    wanted = names(only) if only else set(SECTIONS)
    if skip:
        wanted -= names(skip)
    return [name for name in SECTIONS if name in wanted]


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    listing = "; ".join(f"{name}: {what}" for name, what in SECTIONS.items())
    parser = argparse.ArgumentParser(
        description="fcreplay's performance figures and issue 17's targets.",
        epilog=f"Measurements (for --only / --skip; 'shard' means incremental): {listing}.",
    )
    parser.add_argument("--sizes", default="1000,10000", help="exchange counts (%(default)s)")
    parser.add_argument("--with-100k", action="store_true", help="add the 100,000 suite")
    parser.add_argument("--quick", action="store_true", help="1,000 only, fewer repeats")
    parser.add_argument("--only", help="comma-separated measurements to run (default: all)")
    parser.add_argument("--skip", help="comma-separated measurements to leave out")
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="runs per suite measurement, median taken (default: 3 up to 1,000 exchanges, else 1)",
    )
    parser.add_argument("--plugin-tests", type=int, default=None, help="tests (default 200)")
    parser.add_argument("--proxy-exchanges", type=int, default=None, help="default 2000")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="first wait up to SECONDS for other processes to leave the CPUs idle",
    )
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument("--regenerate", action="store_true", help="ignore cached suites")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="reuse cached suites of this generator version and seed even when the fcreplay "
        "code that recorded them changed",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the check at each size")
    parser.add_argument("--no-record", action="store_true", help="same as --skip record")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    options = parse(argv)
    sections = _sections(options.only, options.skip)
    if options.no_record and "record" in sections:
        sections.remove("record")
    sizes = [1000] if options.quick else [int(s) for s in options.sizes.split(",") if s.strip()]
    if options.with_100k and 100_000 not in sizes:
        sizes.append(100_000)
    sizes.sort()
    reference = max((s for s in sizes if s <= 10_000), default=min(sizes))
    quick = options.quick

    started = time.perf_counter()
    if options.wait_idle:
        wait_until_idle(options.wait_idle)
    before = OtherLoad()
    time.sleep(1)  # a one-second look at the machine before anything of ours runs
    facts = machine() | {"load_start": load_average(), "busy_before": before.share()}
    everything = OtherLoad()
    results: dict[str, Any] = {
        "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": facts,
        "features": features(),
        "seed": options.seed,
        "generator_version": generate.GENERATOR_VERSION,
        "quick": quick,
        "sections": sections,
        "reference_size": reference,
        "sizes": {},
        "other_load": {},
        "failures": {},
    }
    log(f"measuring: {', '.join(sections)}; CLI features: {results['features']}")
    needed = set(sizes if "check" in sections else [])
    if any(name in sections for name in NEEDS_REFERENCE):
        needed.add(reference)
    if "record" in sections:  # records the first cases of the smallest suite
        needed.add(min(sizes))
    manifests = {
        size: generate.ensure_suite(
            size, options.seed, force=options.regenerate, reuse=options.reuse, log=log
        )
        for size in sorted(needed)
    }
    results["generation_seconds"] = time.perf_counter() - started
    scratch = Path(tempfile.mkdtemp(prefix="fcreplay-bench-"))
    ref_folder = generate.data_dir(reference)
    no_cache = results["features"]["no_cache"]

    def measure(name: str, work: Callable[[], Any]) -> None:
        if name not in sections:
            return
        load = OtherLoad()
        section_started = time.perf_counter()
        try:
            results[name] = work()
        except Exception:  # one broken measurement must not lose the others
            failure = traceback.format_exc()
            log(f"{name}: FAILED\n{failure}")
            results["failures"][name] = failure[-3000:]
            return
        results["other_load"][name] = round(load.share(), 3)
        log(f"{name}: done in {time.perf_counter() - section_started:.0f} s")

    try:
        measure(
            "check",
            lambda: {
                str(size): per_size(size, manifests[size], scratch, options, no_cache)
                for size in sizes
            },
        )
        results["sizes"] = results.pop("check", {})
        measure(
            "incremental", lambda: incremental.incremental(ref_folder, scratch, results["features"])
        )
        measure("anchor", lambda: sdk_anchor.anchor(ref_folder, scratch) | {"size": str(reference)})
        measure(
            "plugin",
            lambda: plugin_overhead.plugin_overhead(
                scratch,
                options.plugin_tests or (50 if quick else plugin_overhead.TESTS),
                1 if quick else 3,
            ),
        )
        measure(
            "proxy",
            lambda: proxy_bench.proxy_throughput(
                ref_folder,
                scratch,
                options.proxy_exchanges or (500 if quick else proxy_bench.TOTAL),
            ),
        )
        measure("example", lambda: extras.example_check(scratch, no_cache))
        measure("bytes", lambda: bytes_section(reference, manifests.get(reference)))
        measure("inspect", lambda: extras.inspect_corpus(scratch))
        measure("help", lambda: extras.startup(3 if quick else 9))
        measure(
            "record",
            lambda: recording.record_benchmark(
                min(sizes), options.seed, 60 if quick else 200, options.repeat or 1
            ),
        )
        if options.profile and "record" in results:
            log("profiling the recorder at concurrency 1 ...")
            results["record"]["profile"] = recording.profile_record(
                min(sizes), options.seed, scratch
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results["other_load"]["whole run"] = round(everything.share(), 3)
    results["machine"]["load_end"] = load_average()
    results["targets"] = evaluate(results)
    results["total_seconds"] = time.perf_counter() - started
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{results['timestamp'].replace(':', '')}.json"
    path.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    print(render(results))
    _print_profiles(results)
    print(
        f"\nresults: {path} (generation {results['generation_seconds']:.0f} s, total "
        f"{results['total_seconds']:.0f} s; other processes used "
        f"{results['other_load']['whole run']:.0%} of the CPUs meanwhile)"
    )
    return 0


def per_size(
    size: int,
    manifest: dict[str, Any],
    scratch: Path,
    options: argparse.Namespace,
    no_cache: bool,
) -> dict[str, Any]:
    """Floor, cold check and (up to 10,000) the naive vcrpy baseline of one suite."""
    folder = generate.data_dir(size)
    log(f"size {size}: floor ...")
    data: dict[str, Any] = {
        "exchanges": manifest["exchanges"],
        "streamed": manifest["streamed"],
        "cassettes": manifest["cassettes"],
        "cases": manifest["cases"],
        "floor": suites.floor(folder / "cassettes"),
    }
    log(f"size {size}: fcreplay check ...")
    repeat = options.repeat or (3 if size <= 1000 else 1)
    data["check"] = suites.check(folder, scratch, repeat, no_cache=no_cache)
    if size <= BASELINE_MAX_SIZE:
        log(f"size {size}: naive vcrpy baseline ...")
        data["baseline"] = suites.baseline(folder, scratch, repeat)
    if options.profile:
        log(f"size {size}: profiling fcreplay check --jobs 1 ...")
        data["profile"] = suites.profile_check(folder, scratch)
    return data


def bytes_section(reference: int, manifest: dict[str, Any] | None) -> dict[str, Any]:
    """Bytes per exchange: the repository's example suite and the generated reference suite."""
    found = {"example": extras.bytes_per_exchange(REPO / "cassettes")}
    if manifest is not None:
        generated = extras.bytes_per_exchange(
            generate.data_dir(reference) / "cassettes", manifest["exchanges"]
        )
        found["generated"] = generated | {"size": str(reference)}
    return found


def _print_profiles(results: dict[str, Any]) -> None:
    for size, data in results["sizes"].items():
        for order, text in data.get("profile", {}).items():
            print(f"\nprofile of `fcreplay check --jobs 1`, {int(size):,} exchanges, by {order}:")
            print(text)
    for order, text in (results.get("record") or {}).get("profile", {}).items():
        print(f"\nprofile of recording at concurrency 1, by {order}:\n{text}")


if __name__ == "__main__":
    sys.exit(main())
