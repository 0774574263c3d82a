"""Issue 17's targets (2-core machine), judged from one run's results: held, not held, not
available (the CLI lacks the feature) or not measured (skipped, or not at the size named)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

REFERENCE = "10000"
"""The targets name 10k (and 100k): figures taken at other sizes are shown, not judged."""


@dataclass(frozen=True)
class Verdict:
    """One row of the targets table."""

    target: str
    measured: str
    status: str
    """`held`, `not held`, `not available` or `not measured`."""
    value: float | bool | None = None

    def row(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "measured": self.measured,
            "status": self.status,
            "value": self.value,
        }


def _judge(target: str, value: float, text: str, held: bool) -> Verdict:
    return Verdict(target, text, "held" if held else "not held", value)


def _missing(target: str, why: str = "", status: str = "not measured") -> Verdict:
    return Verdict(target, "–", f"{status} ({why})" if why else status)


def _at_reference(name: str, section: dict[str, Any] | None) -> Verdict | None:
    """A "not measured" verdict unless the section ran on the 10k suite."""
    if not section:
        return _missing(name)
    if section.get("size") != REFERENCE:
        return _missing(name, f"measured at {int(section.get('size') or 0):,} only")
    return None


def cold_check(results: dict[str, Any], size: str) -> float | None:
    """The cold check of a size: the per-size figure, else the incremental benchmark's."""
    data = results.get("sizes", {}).get(size)
    if data and "check" in data:
        return float(data["check"]["seconds"])
    incremental = results.get("incremental")
    if incremental and incremental.get("size") == size:
        return float(incremental["cold"]["seconds"])
    return None


def _cold_over_floor(r: dict[str, Any]) -> Verdict:
    name = "cold `check` at 10k / floor ≤ 1.7×"
    data = r.get("sizes", {}).get(REFERENCE)
    if not data or "check" not in data:
        return _missing(name)
    ratio = data["check"]["seconds"] / data["floor"]["seconds"]
    text = f"{ratio:.2f}× ({data['check']['seconds']:.2f} s / {data['floor']['seconds']:.2f} s)"
    return _judge(name, ratio, text, ratio <= 1.7)


def _cold_seconds(r: dict[str, Any]) -> Verdict:
    name = "cold `check` at 10k ≤ 1.6 s"
    seconds = cold_check(r, REFERENCE)
    if seconds is None:
        return _missing(name)
    flag = " (`--no-cache`)" if r["features"]["no_cache"] else ""
    return _judge(name, seconds, f"{seconds:.2f} s{flag}", seconds <= 1.6)


def _warm(key: str, name: str, limit: float) -> Callable[[dict[str, Any]], Verdict]:
    def judge(r: dict[str, Any]) -> Verdict:
        incremental = r.get("incremental")
        skipped = _at_reference(name, incremental)
        if skipped or not incremental:
            return skipped or _missing(name)
        run = incremental.get(key, {})
        if "seconds" not in run:
            return _missing(name, run.get("note", ""))
        same = "identical" if run["identical"] else _differences(run)
        cache = "" if incremental["cache_available"] else "; no cache in this CLI: a full check"
        text = f"{run['seconds']:.3f} s, output {same} to cold{cache}"
        return _judge(name, run["seconds"], text, run["seconds"] <= limit and run["identical"])

    return judge


def _differences(run: dict[str, Any]) -> str:
    parts = [
        label
        for key, label in (
            ("stdout_identical", "stdout"),
            ("exit_code_identical", "exit code"),
            ("run_log_identical", "run log"),
        )
        if not run.get(key)
    ]
    return "NOT identical (" + ", ".join(parts) + ")"


def _anchor(r: dict[str, Any]) -> Verdict:
    name = "pytest-recording + official SDKs / cold `check` at 10k ≥ 20×"
    anchor = r.get("anchor")
    seconds = cold_check(r, REFERENCE)
    skipped = _at_reference(name, anchor)
    if skipped or not anchor or seconds is None:
        return skipped or _missing(name)
    if anchor["exit_code"] != 0:
        return _missing(name, f"the anchor failed: {anchor['failed']} tests")
    ratio = anchor["seconds"] / seconds
    text = f"{ratio:.1f}× ({anchor['seconds']:.1f} s / {seconds:.2f} s)"
    return _judge(name, ratio, text, ratio >= 20)


def _memory(r: dict[str, Any]) -> Verdict:
    name = "peak memory at 100k (all processes, PSS) ≤ 300 MiB"
    data = r.get("sizes", {}).get("100000")
    if not data or "check" not in data:
        return _missing(name, "needs --with-100k")
    pss = data["check"]["tree_pss_mb"]
    return _judge(name, pss, f"{pss:.0f} MiB", pss <= 300)


def _growth(r: dict[str, Any]) -> Verdict:
    name = "100k / 10k wall ≤ 10.5"
    big, ten = cold_check(r, "100000"), cold_check(r, REFERENCE)
    if big is None or ten is None:
        return _missing(name, "needs --with-100k")
    ratio = big / ten
    return _judge(name, ratio, f"{ratio:.1f} ({big:.1f} s / {ten:.2f} s)", ratio <= 10.5)


def _example(r: dict[str, Any]) -> Verdict:
    name = "example `check` wall (median of 5) ≤ 250 ms"
    example = r.get("example")
    if not example:
        return _missing(name)
    seconds = example["seconds"]
    text = f"{seconds * 1000:.0f} ms"
    if "no_cache" in example:
        text += f" (`--no-cache`: {example['no_cache']['seconds'] * 1000:.0f} ms)"
    return _judge(name, seconds, text, seconds <= 0.25)


def _plugin(r: dict[str, Any]) -> Verdict:
    name = "plugin per-test overhead / pytest-recording's ≤ 0.5×"
    plugin = r.get("plugin")
    if not plugin or plugin.get("ratio") is None:
        return _missing(name, (plugin or {}).get("note", "")[:200])
    per = plugin["per_test_ms"]
    text = f"{plugin['ratio']:.2f}× ({per['fcreplay']:.2f} ms / {per['vcr']:.2f} ms per test)"
    if plugin.get("cpu_ratio") is not None:
        text += f"; in CPU time {plugin['cpu_ratio']:.2f}×"
    if r.get("quick"):
        return Verdict(name, text, "not judged (--quick: 50 tests, one round)", plugin["ratio"])
    if min(per.values()) <= 0:
        return Verdict(name, text, "not judged (an overhead within the noise)", plugin["ratio"])
    return _judge(name, plugin["ratio"], text, plugin["ratio"] <= 0.5)


def _proxy(r: dict[str, Any]) -> Verdict:
    name = "proxy replay throughput, 16 clients ≥ 500 exchanges/s"
    proxy = r.get("proxy")
    if not proxy:
        return _missing(name)
    rate = proxy["replay"]["exchanges_per_second"]
    ok = proxy["all_replayed"]
    text = f"{rate:.0f} exchanges/s ({proxy['replay']['exchanges']} exchanges)"
    if not ok:
        text += ", NOT all replayed"
    if r.get("quick"):
        return Verdict(name, text, "not judged (--quick: 500 exchanges of the 1k suite)", rate)
    return _judge(name, rate, text, rate >= 500 and ok)


def _bytes(r: dict[str, Any]) -> Verdict:
    name = "bytes per exchange, example shape (generated 10k suite) ≤ 12 KB"
    sizes = r.get("bytes", {})
    generated = sizes.get("generated")
    skipped = _at_reference(name, generated)
    if skipped or not generated:
        return skipped or _missing(name)
    kb = generated["kb_per_exchange"]
    text = f"{kb:.1f} KB"
    if "example" in sizes:
        text += f" (repository example suite: {sizes['example']['kb_per_exchange']:.1f} KB)"
    return _judge(name, kb, text, kb <= 12)


def _shard(r: dict[str, Any]) -> Verdict:
    name = "`check --shard K/4` merged = unsharded"
    incremental = r.get("incremental")
    skipped = _at_reference(name, incremental)
    if skipped or not incremental:
        return skipped or _missing(name)
    shard = incremental["shard"]
    if not shard.get("available"):
        return _missing(name, "no `check --shard` / `fcreplay merge`", "not available")
    same = shard["identical"]
    return Verdict(name, "identical" if same else "NOT identical", "held" if same else "not held")


JUDGES = (
    _cold_over_floor,
    _cold_seconds,
    _warm("warm", "warm `check` at 10k, nothing changed ≤ 0.4 s, output identical", 0.4),
    _warm("warm_changed", "warm `check` at 10k, one cassette changed ≤ 0.6 s, identical", 0.6),
    _anchor,
    _memory,
    _growth,
    _example,
    _plugin,
    _proxy,
    _bytes,
    _shard,
)


def evaluate(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target of issue 17, in the issue's order."""
    return [judge(results).row() for judge in JUDGES]


def render_targets(rows: list[dict[str, Any]]) -> list[str]:
    """The targets table (Markdown)."""
    lines = ["| target (issue 17, 2 cores) | measured | held |", "|---|---|---|"]
    lines += [f"| {row['target']} | {row['measured']} | {row['status']} |" for row in rows]
    return lines
