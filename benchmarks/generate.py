"""Generate (or reuse) a synthetic benchmark suite of about N recorded exchanges.

    python benchmarks/generate.py --size 10000 [--seed 7] [--force]

The suite lives in `benchmarks/data/<size>/` (git-ignored): a 20-tool contract,
cases, fake tool results, a simulator script, `fcreplay.toml` with ten targets
over the four adapters (two of them streamed), cassettes recorded through the real
runner (`record`) from the bundled simulator called in-process,
and golden files made by `fcreplay replay` + `fcreplay golden update --reason
benchmark`. `manifest.json` is written last; a folder whose manifest matches the
generator version, the seed and the versions of what wrote the cassettes is reused.

Everything is synthetic: the scripted models are not real models.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import domain
from sim_record import record

import fcreplay
from fcreplay.adapters.registry import BUILT_IN, get_adapter
from fcreplay.cassettes.store import FORMAT as CASSETTE_FORMAT
from fcreplay.golden.store import GOLDEN_FORMAT
from fcreplay.simulator.server import base_urls
from fcreplay.version import __version__

GENERATOR_VERSION = "1"
"""Bump when the generated content changes (contract, cases, script, configuration)."""
DEFAULT_SEED = 7
HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
REPETITIONS = 2
VARIANTS = domain.VARIANTS
SIMULATOR_URL = "http://127.0.0.1:8765"
"""Base URL the suite's targets name; recording in-process never opens it."""
RECORD_CONCURRENCY = 8
"""Units recorded at once while generating (cassette writes wait on fsync)."""


@dataclass(frozen=True)
class BenchTarget:
    """A target of the generated suite and the scripted profile its model follows."""

    name: str
    adapter: str
    model: str
    profile: str
    stream: bool = False
    strict: bool = False


TARGETS = (
    BenchTarget("chat-a", "openai_chat", "bench-a", "careful"),
    BenchTarget("chat-b", "openai_chat", "bench-b", "hasty"),
    BenchTarget("chat-stream", "openai_chat", "bench-stream-h", "hasty", stream=True),
    BenchTarget("responses-a", "openai_responses", "bench-a", "careful", strict=True),
    BenchTarget("responses-b", "openai_responses", "bench-b", "hasty"),
    BenchTarget("anthropic-a", "anthropic", "bench-a", "careful"),
    BenchTarget("anthropic-b", "anthropic", "bench-b", "hasty"),
    BenchTarget("anthropic-stream", "anthropic", "bench-stream-c", "careful", stream=True),
    BenchTarget("gemini-a", "gemini", "bench-a", "careful"),
    BenchTarget("gemini-b", "gemini", "bench-b", "hasty"),
)
"""Every model id is distinct per adapter, so the simulator counts repetitions per target."""
HASTY_MODELS = sorted({t.model for t in TARGETS if t.profile == "hasty"})


def data_dir(size: int) -> Path:
    """Where the suite of `size` exchanges is cached."""
    return DATA / str(size)


def cache_key(size: int, seed: int) -> dict[str, Any]:
    """What must match for a cached suite to be reused."""
    return {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "size": size,
        "fcreplay_version": __version__,
        "adapter_versions": {name: get_adapter(name).VERSION for name in BUILT_IN},
        "cassette_format": CASSETTE_FORMAT,
        "golden_format": GOLDEN_FORMAT,
    }


def recording_sources() -> dict[str, str]:
    """sha256 of every loaded fcreplay module's source, by file (call after recording:
    then exactly the code that recorded the cassettes and wrote the goldens is loaded)."""
    root = Path(fcreplay.__file__).resolve().parent
    sources = {}
    for name, module in sorted(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if (name == "fcreplay" or name.startswith("fcreplay.")) and file:
            path = Path(file).resolve()
            sources[str(path.relative_to(root))] = _sha256(path)
    return sources


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def stale_sources(manifest: dict[str, Any]) -> list[str]:
    """The recording modules that changed since the suite was generated."""
    root = Path(fcreplay.__file__).resolve().parent
    recorded: dict[str, str] = manifest.get("sources", {})
    return sorted(name for name, digest in recorded.items() if _sha256(root / name) != digest)


def ensure_suite(
    size: int,
    seed: int = DEFAULT_SEED,
    *,
    force: bool = False,
    reuse: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """The manifest of the cached suite of `size`, generating it first when needed.

    A cached suite is reused when the generator version, seed and size match and
    the code that recorded it (versions, formats and the source of every fcreplay
    module loaded while recording) is unchanged; with `reuse`, generator version,
    seed and size are enough (e.g. while iterating on code that only reads).
    """
    folder = data_dir(size)
    manifest_path = folder / "manifest.json"
    key = cache_key(size, seed)
    if not force and manifest_path.is_file():
        manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
        cached = manifest.get("key", {})
        same_generator = all(cached.get(k) == key[k] for k in ("generator_version", "seed", "size"))
        changed = stale_sources(manifest)
        if same_generator and (reuse or (cached == key and not changed)):
            note = " (recorded by other fcreplay code; --reuse)" if cached != key or changed else ""
            log(f"suite {size}: reusing {folder} ({manifest['exchanges']} exchanges){note}")
            return manifest
        why = (
            "another generator version or seed"
            if not same_generator
            else "other adapter or format versions"
            if cached != key
            else "changed recording code: " + ", ".join(changed[:5])
        )
        log(f"suite {size}: cached data is from {why}; regenerating")
    return generate(size, seed, folder, log=log)


# --- writing the suite ------------------------------------------------------------------------


def build_cases(size: int, seed: int) -> tuple[list[domain.BuiltCase], int]:
    """Cases whose estimated exchanges land nearest to `size`, and that estimate."""
    rng = random.Random(seed)
    draw = domain.kind_sequence(rng)
    taken: set[str] = set()
    cases: list[domain.BuiltCase] = []
    total = 0
    while True:
        built = domain.build_case(rng, f"c{len(cases) + 1:05d}", draw(), taken)
        planned = planned_exchanges(built)
        if total + planned > size and total + planned - size > size - total and cases:
            return cases, total
        cases.append(built)
        total += planned
        if total >= size:
            return cases, total


def planned_exchanges(built: domain.BuiltCase) -> int:
    """HTTP exchanges recording this case makes across targets, variants and repetitions."""
    total = 0
    for target in TARGETS:
        for variant in VARIANTS:
            counts = built.exchanges.get((variant, target.profile))
            if counts is None:
                continue  # forced only runs for cases that expect exactly one call
            total += sum(counts[rep % len(counts)] for rep in range(REPETITIONS))
    faults = built.script.get("faults", [])
    return total + len(faults)


def script_json(cases: list[domain.BuiltCase], seed: int) -> dict[str, Any]:
    """The simulator script: "*" answers as the careful model, hasty model ids as hasty."""
    document: dict[str, Any] = {
        "note": "SYNTHETIC benchmark script (benchmarks/generate.py, seed "
        f"{seed}): invented model profiles, never a claim about real models.",
        "cases": {},
    }
    for built in cases:
        entry = dict(built.script)
        profiles = entry.pop("profiles")
        entry["profiles"] = {"*": profiles["careful"]}
        for model in HASTY_MODELS:
            entry["profiles"][model] = profiles["hasty"]
        document["cases"][built.line["id"]] = entry
    return document


def _fault_target(rng: random.Random, api: str) -> BenchTarget:
    return rng.choice([t for t in TARGETS if t.adapter == api])


def config_toml(
    size: int, seed: int, *, simulator_url: str = SIMULATOR_URL, inputs: Path | None = None
) -> str:
    """The suite configuration (standalone fcreplay.toml).

    Input files are found in `inputs` when given (absolute paths), else beside the
    configuration; cassettes, golden and runs are always beside it.
    """
    urls = base_urls(simulator_url)

    def place(name: str) -> str:
        return json.dumps(str(inputs / name) if inputs is not None else name)

    lines = [
        f"# SYNTHETIC benchmark suite: benchmarks/generate.py, size {size}, seed {seed},",
        f"# generator version {GENERATOR_VERSION}. The targets are the bundled simulator.",
        f"contract = {place('contract.json')}",
        f"system_prompt = {place('prompt.txt')}",
        'prompt_version = "bench-support-v1"',
        f"cases = {place('cases.jsonl')}",
        f'cases_version = "bench-{GENERATOR_VERSION}-{seed}-{size}"',
        f"tool_results = {place('tool_results.json')}",
        f"simulator_script = {place('simulator.json')}",
        'cassettes = "cassettes"',
        'golden = "golden"',
        'runs = "runs"',
        "temperature = 0",
        "max_output_tokens = 500",
        f"repetitions = {REPETITIONS}",
        "parallel_tool_calls = true",
        "max_steps = 4",
        "max_retries = 3",
        "variants = [" + ", ".join(f'"{v}"' for v in VARIANTS) + "]",
        "# responses-a is strict: OpenAI's strict transform makes optional fields required and",
        "# nullable and moves enums into anyOf, which schema diff classes as semantic_change /",
        "# description_changed (documented). A suite with a strict target has to allow them.",
        'schema_diff_allow = ["semantic_change", "description_changed"]',
    ]
    if inputs is not None:  # the inputs of a cached suite, read from a scratch folder
        lines.append("allow_outside_project = true")
    for target in TARGETS:
        lines += [
            "",
            "[[targets]]",
            f'name = "{target.name}"',
            f'adapter = "{target.adapter}"',
            f'model = "{target.model}"',
            f'base_url = "{urls[target.adapter]}"',
            f"stream = {str(target.stream).lower()}",
            f"strict = {str(target.strict).lower()}",
        ]
    return "\n".join(lines) + "\n"


def _dump(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_suite(folder: Path, size: int, seed: int) -> tuple[int, int, dict[str, Any]]:
    """Write the suite's input files; return (cases, planned exchanges, script document)."""
    cases, planned = build_cases(size, seed)
    rng = random.Random(seed + 1)
    for built in cases:
        if built.fault_api is not None:
            target = _fault_target(rng, built.fault_api)
            built.script["faults"][0]["model"] = target.model
    folder.mkdir(parents=True, exist_ok=True)
    _dump(folder / "contract.json", domain.contract_json())
    (folder / "prompt.txt").write_text(domain.SYSTEM_PROMPT + "\n", encoding="utf-8")
    (folder / "cases.jsonl").write_text(
        "".join(json.dumps(c.line, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8"
    )
    _dump(folder / "tool_results.json", domain.tool_results_json())
    script = script_json(cases, seed)
    _dump(folder / "simulator.json", script)
    (folder / "fcreplay.toml").write_text(config_toml(size, seed), encoding="utf-8")
    return len(cases), planned, script


def cassette_stats(cassettes: Path) -> dict[str, int]:
    """Count cassettes, exchanges (interactions) and streamed exchanges on disk."""
    files = exchanges = streamed = 0
    for path in sorted(cassettes.rglob("*.json")):
        document = json.loads(path.read_bytes())
        files += 1
        for interaction in document["interactions"]:
            exchanges += 1
            response = interaction["response"]
            streamed += "sse" in response
    return {"cassettes": files, "exchanges": exchanges, "streamed": streamed}


def _fcreplay(folder: Path, *args: str) -> None:
    command = [sys.executable, "-m", "fcreplay", *args, "--config", "fcreplay.toml"]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode != 0:  # drift right after recording, or a bad suite: never benchmark it
        sys.stderr.write(done.stdout + done.stderr)
        raise RuntimeError(f"{' '.join(command)} failed with exit code {done.returncode}")


def generate(
    size: int, seed: int, folder: Path, *, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Write, record and baseline the suite of about `size` exchanges; return its manifest."""
    started = time.monotonic()
    if folder.exists():
        shutil.rmtree(folder)
    cases, planned, script = write_suite(folder, size, seed)
    log(f"suite {size}: {cases} cases, {planned} exchanges planned; recording ...")
    record(folder, script, concurrency=RECORD_CONCURRENCY)
    recorded = time.monotonic()
    stats = cassette_stats(folder / "cassettes")
    log(f"suite {size}: replay + golden update ...")
    _fcreplay(folder, "replay")
    _fcreplay(folder, "golden", "update", "--reason", "benchmark")
    shutil.rmtree(folder / "runs")  # the recording and replay logs are not needed again
    manifest = {
        "generation_id": uuid.uuid4().hex,
        "key": cache_key(size, seed),
        "sources": recording_sources(),
        "cases": cases,
        "targets": len(TARGETS),
        "variants": list(VARIANTS),
        "repetitions": REPETITIONS,
        "planned_exchanges": planned,
        **stats,
        "record_seconds": round(recorded - started, 1),
        "generate_seconds": round(time.monotonic() - started, 1),
    }
    _dump(folder / "manifest.json", manifest)
    log(
        f"suite {size}: {stats['exchanges']} exchanges ({stats['streamed']} streamed) in "
        f"{stats['cassettes']} cassettes, {cases} cases; generated in "
        f"{manifest['generate_seconds']} s"
    )
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, required=True, help="exchanges to aim for")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--force", action="store_true", help="regenerate even when cached")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="reuse a cached suite of this generator version and seed even if fcreplay changed",
    )
    options = parser.parse_args(argv)
    ensure_suite(options.size, options.seed, force=options.force, reuse=options.reuse)
    return 0


if __name__ == "__main__":
    sys.exit(main())
