"""Bytes per exchange of a suite's cassettes under each layout choice, and their load time.

    python benchmarks/cassette_layout.py benchmarks/data/10000/cassettes
    python benchmarks/cassette_layout.py cassettes --repeat 7

Reads the cassettes (format 1 or 2), writes each one again in memory in every
layout considered for cassette format 2 (docs/performance.md, "Cassette layout"),
and prints a Markdown table; then the CPU time of `json.loads` and of
`load_cassette` over the files as they are on disk (median of --repeat runs).
Nothing is written.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fcreplay.cassettes.interactions import Interaction, interaction_json
from fcreplay.cassettes.layout import layout
from fcreplay.cassettes.shared import Shared, share
from fcreplay.cassettes.store import load_cassette


def layouts(path: Path) -> tuple[int, dict[str, int]]:
    """(exchanges, bytes under each layout) of one cassette."""
    cassette = load_cassette(path)
    items = [interaction_json(i) for i in cassette.interactions if isinstance(i, Interaction)]
    block = {**(cassette.meta.to_json() if cassette.meta else {}), "format": 1}
    old = {"version": 1, "fcreplay": block, "interactions": items}
    found: list[Shared] = []
    shared_items = [share(item, found) for item in items]
    table: dict[str, Any] = {}
    for value in found:
        table.setdefault(value.name, value.value)
    new = {"version": 1, "fcreplay": {**block, "format": 2}, "shared": table}
    new["interactions"] = shared_items
    if not table:
        del new["shared"]
    texts = {
        "format 1: indent 1, tools in every body": json.dumps(old, indent=1, ensure_ascii=False),
        "indent 1, tool lists shared": json.dumps(new, indent=1, ensure_ascii=False),
        "short leaves on one line, tool lists in every body": layout(old),
        "format 2: tool lists shared, short leaves on one line": layout(new),
        "both minified (a lower bound)": json.dumps(new, ensure_ascii=False, separators=(",", ":")),
    }
    return len(items), {name: len(text.encode()) + 1 for name, text in texts.items()}


def cpu_seconds(work: Callable[[], object], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        started = time.process_time()
        work()
        runs.append(time.process_time() - started)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a folder of fcreplay JSON cassettes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median)")
    args = parser.parse_args()
    files = sorted(args.folder.rglob("*.json"))
    exchanges, totals = 0, dict[str, int]()
    for path in files:
        count, sizes = layouts(path)
        exchanges += count
        for name, size in sizes.items():
            totals[name] = totals.get(name, 0) + size
    on_disk = sum(path.stat().st_size for path in files)
    print(f"{args.folder}: {len(files)} cassettes, {exchanges} exchanges\n")
    print("| layout | bytes / exchange |\n|---|---:|")
    for name, size in totals.items():
        print(f"| {name} | {size / exchanges / 1000:.2f} KB |")
    print(f"| as on disk | {on_disk / exchanges / 1000:.2f} KB |\n")
    parse = cpu_seconds(lambda: [json.loads(path.read_bytes()) for path in files], args.repeat)
    load = cpu_seconds(lambda: [load_cassette(path) for path in files], args.repeat)
    print(f"json.loads of every file: {parse:.3f} CPU s; load_cassette: {load:.3f} CPU s")


if __name__ == "__main__":
    main()
