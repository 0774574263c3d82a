"""Run one command; print its wall time, peak RSS and CPU time as JSON (from `os.wait4`).

    python benchmarks/measure.py [--tree] [--stderr FILE] OUTPUT_FILE CWD COMMAND [ARG ...]

The command's stdout and stderr go to OUTPUT_FILE (stderr to FILE with `--stderr`,
so the output can be compared without the progress lines); one JSON line goes to
stdout.

Why a launcher: Linux keeps a process's peak RSS across fork and exec (a child
forked or vforked from a large process reports the parent's peak, even after
exec), so children started straight from the benchmark harness, which holds
generated data, would report the harness's size. This launcher is small, so the
rusage `os.wait4` returns for its child is the child's own.

`ru_maxrss` is the peak of the child or of any one of its waited-for children,
never their sum, so a command that works in several processes (`fcreplay check`
replays large suites in worker processes) uses more memory than it says.
`--tree` also samples, every 0.2 s, the proportional set size (PSS, shared
pages split between the processes sharing them) summed over the child and all
its descendants, from /proc/<pid>/smaps_rollup, and reports the peak sample.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

SAMPLE_SECONDS = 0.2


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (from /proc/<pid>/task/<tid>/children)."""
    found, index = [pid], 0
    while index < len(found):
        current = found[index]
        index += 1
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                text = Path(f"/proc/{current}/task/{task}/children").read_text()
            except OSError:
                continue
            found += [int(child) for child in text.split()]
    return found


def pss_kb(pid: int) -> int:
    """Proportional set size of one process in kilobytes (0 once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


class TreeSampler(threading.Thread):
    """Samples the summed PSS of a process tree until stopped; keeps the peak."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kb = 0
        self.most_processes = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(SAMPLE_SECONDS):
            tree = descendants(self.pid)
            self.most_processes = max(self.most_processes, len(tree))
            self.peak_kb = max(self.peak_kb, sum(pss_kb(pid) for pid in tree))


def main(argv: list[str]) -> int:
    tree = argv[:1] == ["--tree"]
    if tree:
        argv = argv[1:]
    errors = None
    if argv[:1] == ["--stderr"]:
        errors, argv = argv[1], argv[2:]
    output, cwd, command = argv[0], argv[1], argv[2:]
    sampler: TreeSampler | None = None
    with open(output, "wb") as sink, open(errors or os.devnull, "wb") as error_sink:
        started = time.perf_counter()
        process = subprocess.Popen(
            command,
            cwd=cwd,
            stdout=sink,
            stderr=subprocess.STDOUT if errors is None else error_sink,
        )
        if tree:
            sampler = TreeSampler(process.pid)
            sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    result: dict[str, Any] = {
        "seconds": seconds,
        "rss_mb": usage.ru_maxrss / 1024,  # kilobytes on Linux
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "exit_code": process.returncode,
    }
    if sampler is not None:
        sampler.stopped.set()
        sampler.join()
        result["tree_pss_mb"] = sampler.peak_kb / 1024
        result["tree_processes"] = sampler.most_processes
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
