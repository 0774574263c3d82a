"""What every benchmark module shares: paths, the child-process launcher, the machine facts,
which optional CLI features exist, and how two outputs of a check are compared."""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
PYTHON = sys.executable
CONFIG = ("--config", "fcreplay.toml")
RUN_ID = re.compile(r"\b\d{8}T\d{6,9}Z-[a-z]+-[0-9a-f]{6}\b")
"""A run id as `fcreplay.runlog.new_run_id` writes it (masked when outputs are compared)."""
VOLATILE_KEYS = frozenset({"run_id", "elapsed_ms"})
"""Run-log fields that differ between two runs of the same check by design."""


def log(message: str) -> None:
    """Progress goes to stderr; stdout is the report."""
    print(message, file=sys.stderr, flush=True)


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
    command: Sequence[str],
    *,
    cwd: Path | None = None,
    output: Path,
    tree: bool = False,
    errors: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Measured:
    """Run a command to completion through benchmarks/measure.py (a small launcher that
    takes the child's own rusage with `os.wait4`; see there why it must be small).

    stdout and stderr go to `output` (stderr to `errors` when given). With `tree`, the
    launcher also samples the memory of the child's whole process tree.
    """
    flags = ["--tree"] if tree else []
    if errors is not None:
        flags += ["--stderr", str(errors)]
    launched = subprocess.run(
        [PYTHON, str(HERE / "measure.py"), *flags, str(output), str(cwd or Path.cwd()), *command],
        capture_output=True,
        text=True,
        check=True,
        env=None if env is None else {**os.environ, **env},
    )
    return Measured(**json.loads(launched.stdout.strip().splitlines()[-1]))


def summarize(runs: Sequence[Measured]) -> dict[str, Any]:
    """Median wall and CPU time, the largest memory figures, the last exit code."""
    return {
        "seconds": statistics.median(m.seconds for m in runs),
        "runs": [m.seconds for m in runs],
        "rss_mb": max(m.rss_mb for m in runs),
        "tree_pss_mb": max((m.tree_pss_mb or 0.0) for m in runs),
        "tree_processes": max((m.tree_processes or 0) for m in runs),
        "cpu_seconds": statistics.median(m.cpu_seconds for m in runs),
        "exit_code": runs[-1].exit_code,
    }


def fcreplay(*args: str) -> list[str]:
    """The command line of `python -m fcreplay ARGS` with the harness's interpreter."""
    return [PYTHON, "-m", "fcreplay", *args]


# --- the machine ------------------------------------------------------------------------------


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
        "fcreplay_commit": commit(),
        "harness_commit": harness_commit(),
        "nproc": os.cpu_count(),
        "cpu": model,
        "memory_gib": _memory_gib(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pyyaml_libyaml": bool(getattr(yaml, "__with_libyaml__", False)),
        "packages": _versions("vcrpy", "pytest", "pytest-recording", "openai", "anthropic")
        | _versions("google-genai", "httpx", "httpx2"),
    }


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return None


def _versions(*names: str) -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def commit() -> str | None:
    """The last commit that changed fcreplay/ (read only), "+changes" when the working tree
    differs from it: the code measured, whatever the harness's own commits."""
    try:
        last = _git("log", "-1", "--format=%h", "--", "fcreplay")
        changes = _git("status", "--porcelain", "--", "fcreplay")
    except (OSError, subprocess.CalledProcessError):
        return None
    return last + ("+changes" if changes else "")


def harness_commit() -> str | None:
    """The repository's HEAD: the harness that measured."""
    try:
        return _git("rev-parse", "--short", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        return None


def _git(*args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


# --- optional CLI features ----------------------------------------------------------------------


def features() -> dict[str, bool]:
    """Which of issue 17's CLI features this fcreplay has, from its own help texts."""
    check_help = help_text("check")
    top_help = help_text()
    return {
        "no_cache": "--no-cache" in check_help,
        "shard": "--shard" in check_help,
        "merge": re.search(r"^\s+merge\b", top_help, re.MULTILINE) is not None,
    }


def help_text(*command: str) -> str:
    """What `fcreplay COMMAND --help` prints."""
    done = subprocess.run(fcreplay(*command, "--help"), capture_output=True, text=True, check=False)
    return done.stdout


def read_cassette(path: Path) -> dict[str, Any]:
    """A cassette of the generated suites as JSON, with every body as it was sent: a tool
    list a compact cassette stores once (format 2, `fcreplay.cassettes.shared`) is put
    back in each request that refers to it."""
    document: dict[str, Any] = json.loads(path.read_bytes())
    if (document.get("fcreplay") or {}).get("format", 1) != 1:
        from fcreplay.cassettes import shared

        shared.expand(document, document.get("interactions") or [])
    return document


# --- comparing two checks ---------------------------------------------------------------------


def masked(text: str) -> str:
    """A check's stdout with its run ids masked: what must match between two runs."""
    return RUN_ID.sub("<run>", text)


def run_log_path(stdout: str, cwd: Path) -> Path | None:
    """The run log a check names on its stdout (`... (runs/<id>.jsonl)`)."""
    found = re.search(r"\(([^()\s]+\.jsonl)\)", stdout)
    if found is None:
        return None
    path = Path(found.group(1))
    return path if path.is_absolute() else cwd / path


def run_log_records(path: Path) -> list[Any]:
    """Every line of a run log, parsed, without the fields that differ by design."""
    with path.open(encoding="utf-8") as stream:
        return [_strip(json.loads(line)) for line in stream if line.strip()]


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def link_tree(source: Path, target: Path, *, skip: Sequence[str] = ()) -> None:
    """Copy `source` to `target`: cassettes hard-linked (fast, 0 bytes; never written in
    place: a changed cassette is replaced), everything else copied."""

    def copy(src: str, dst: str) -> object:
        if "cassettes" in Path(src).relative_to(source).parts:
            try:
                os.link(src, dst)
                return dst
            except OSError:
                pass
        return shutil.copy2(src, dst)

    shutil.copytree(source, target, copy_function=copy, ignore=shutil.ignore_patterns(*skip))


# --- other work on the machine ----------------------------------------------------------------


class OtherLoad:
    """How much of the machine other processes used over a span: all CPUs' busy time from
    /proc/stat minus this process's and its waited-for children's CPU time."""

    def __init__(self) -> None:
        self._start = self._sample()

    @staticmethod
    def _sample() -> tuple[float, float, float]:
        busy = 0.0
        try:
            fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
            ticks = [int(x) for x in fields]
            busy = (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
        own = sum(
            usage.ru_utime + usage.ru_stime
            for usage in (
                resource.getrusage(resource.RUSAGE_SELF),
                resource.getrusage(resource.RUSAGE_CHILDREN),
            )
        )
        return time.monotonic(), busy, own

    def share(self) -> float:
        """Other processes' CPU use since the start, as a share of all CPUs (0..1)."""
        now, busy, own = self._sample()
        wall = (now - self._start[0]) * (os.cpu_count() or 1)
        others = (busy - self._start[1]) - (own - self._start[2])
        return max(0.0, others / wall) if wall > 0 else 0.0


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def wait_until_idle(limit_seconds: float, threshold: float = 0.15, windows: int = 3) -> float:
    """Wait (at most `limit_seconds`) until other processes use under `threshold` of the
    machine in `windows` consecutive 3-second windows, before anything is measured; return
    the share in the last window."""
    deadline = time.monotonic() + limit_seconds
    quiet = 0
    while True:
        probe = OtherLoad()
        time.sleep(3)
        share = probe.share()
        quiet = quiet + 1 if share < threshold else 0
        if quiet >= windows or time.monotonic() > deadline:
            return share
        log(f"waiting for a quieter machine: other processes use {share:.0%} of it ...")
