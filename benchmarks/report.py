"""The Markdown report of one run: a section per measurement, then the targets table."""

from __future__ import annotations

from typing import Any

from targets import render_targets


def render(results: dict[str, Any]) -> str:
    """Every section the run measured, then issue 17's targets."""
    lines = [_machine(results)]
    for section in (_sizes, _incremental, _anchor, _plugin, _proxy, _extras, _record):
        found = section(results)
        if found:
            lines += ["", *found]
    lines += ["", *render_targets(results["targets"])]
    notes = [
        f"size {size}: {data['check']['note']}"
        for size, data in results["sizes"].items()
        if "note" in data.get("check", {})
    ]
    notes += [
        f"{name}: {results[name]['note']}"
        for name in ("anchor", "plugin")
        if isinstance(results.get(name), dict) and "note" in results[name]
    ]
    notes += [
        f"{name}: FAILED: {text.strip().splitlines()[-1]}"
        for name, text in results.get("failures", {}).items()
    ]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def _machine(results: dict[str, Any]) -> str:
    m = results["machine"]
    f = results["features"]
    have = ", ".join(f"{k.replace('_', '-')} {'yes' if v else 'no'}" for k, v in f.items())
    return (
        f"machine: {m['nproc']} CPUs, {m['cpu']}, {m['memory_gib']} GiB, Python {m['python']} "
        f"(PyYAML with libyaml: {m['pyyaml_libyaml']}); fcreplay code of {m['fcreplay_commit']} "
        f"(harness {m.get('harness_commit')}); "
        f"CLI features: {have}; load average at start {m['load_start']}, "
        f"other processes' CPU use before start {m['busy_before']:.0%} of the machine"
    )


def _sizes(results: dict[str, Any]) -> list[str]:
    if not results["sizes"]:
        return []
    lines = [
        "| exchanges | attempts | cassettes | check s | check CPU s | peak RSS MB (largest "
        "process) | peak PSS MiB (all processes) | floor s | vcrpy baseline s | check / floor "
        "| baseline / check |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for data in results["sizes"].values():
        check, base, floor = data["check"], data.get("baseline"), data["floor"]
        lines.append(
            f"| {data['exchanges']:,} | {check['attempts'] or '?':,} | {data['cassettes']:,} | "
            f"{check['seconds']:.2f} | {check['cpu_seconds']:.1f} | {check['rss_mb']:.0f} | "
            f"{check['tree_pss_mb']:.0f} ({check['tree_processes']}) | {floor['seconds']:.3f} | "
            + (f"{base['seconds']:.2f}" if base else "not run")
            + f" | {check['seconds'] / floor['seconds']:.2f}x | "
            + (f"{base['seconds'] / check['seconds']:.2f}x" if base else "-")
            + " |"
        )
    return lines


def _incremental(results: dict[str, Any]) -> list[str]:
    inc = results.get("incremental")
    if not inc:
        return []
    cache = "available" if inc["cache_available"] else "NOT available: every run is a full check"
    lines = [
        f"incremental check at {int(inc['size']):,} (a copy of the suite; cache {cache}):",
        "",
        "| run | wall s | exit | same as cold (stdout / exit / run log) |",
        "|---|---:|---:|---|",
    ]
    labels = {
        "cold": "cold" + (" (--no-cache)" if inc["cache_available"] else ""),
        "prime": "filling the cache",
        "warm": "warm, nothing changed",
        "warm_changed": "warm, one cassette changed",
        "cold_changed": "cold, same changed tree",
    }
    for key, label in labels.items():
        run = inc.get(key)
        if not run or "seconds" not in run:
            continue
        same = "-"
        if "identical" in run:
            same = " / ".join(
                "yes" if run[k] else "NO"
                for k in ("stdout_identical", "exit_code_identical", "run_log_identical")
            )
        lines.append(f"| {label} | {run['seconds']:.2f} | {run['exit_code']} | {same} |")
    changed = inc.get("changed_cassette")
    if changed:
        lines.append(
            f"\nchanged: {changed['cassette']} (last call's arguments), visible in the output: "
            f"{'yes' if inc.get('change_visible') else 'NO'}"
        )
    shard = inc["shard"]
    if shard.get("available"):
        lines.append(
            f"shards: {', '.join(f'{s:.2f}' for s in shard['shard_seconds'])} s; `"
            f"{shard['command']}` exit {shard['merge_exit_code']}; merged = unsharded: "
            f"{'yes' if shard['identical'] else 'NO'} (verdict by {shard.get('verdict_command')}"
            f": exit code {shard.get('exit_code_identical')}, run log "
            f"{shard.get('run_log_identical')}, stdout after its first line "
            f"{shard.get('stdout_identical_after_first_line')}, golden diff "
            f"{shard.get('golden_diff_identical')})"
        )
    return lines


def _anchor(results: dict[str, Any]) -> list[str]:
    a = results.get("anchor")
    if not a:
        return []
    return [
        f"pytest-recording + official SDKs at {int(a['size']):,}: {a['seconds']:.1f} s wall "
        f"({a['cpu_seconds']:.1f} s CPU, {a['tree_pss_mb']:.0f} MiB PSS), "
        f"{a['passed']} passed / {a['failed']} failed of {a['project']['tests']} tests "
        f"({a['project']['exchanges']:,} exchanges); `{a['command']}`"
    ]


def _plugin(results: dict[str, Any]) -> list[str]:
    p = results.get("plugin")
    if not p or "overhead_ms" not in p:
        return []
    lines = [
        f"plugin overhead, {p['tests']} tests through the openai SDK, each beside its stub twin "
        f"in one session (median of {p['repeat']}; a stub test takes {p['stub_test_ms']:.2f} ms):",
        "",
        "| plugin | in the tests ms | end of session ms / N | session share ms / N "
        "| per-test overhead ms | the same in CPU ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, label in (("fcreplay", "fcreplay plugin"), ("vcr", "pytest-recording")):
        o = p["overhead_ms"][key]
        lines.append(
            f"| {label} | {o['in_tests']:.2f} | {o['end']:.2f} | {o['session']:.2f} "
            f"| {o['total']:.2f} | {o['cpu_total']:.2f} |"
        )
    return lines


def _proxy(results: dict[str, Any]) -> list[str]:
    p = results.get("proxy")
    if not p:
        return []
    rows = []
    for phase in ("record", "replay"):
        run = p[phase]
        rows.append(
            f"| {phase} | {run['exchanges']} | {run['seconds']:.2f} | "
            f"{run['exchanges_per_second']:.0f} | {run['proxy']['cpu_seconds']:.1f} | "
            f"{run['client_cpu_seconds']:.1f} | "
            + ", ".join(f"{k} {v}" for k, v in run["answers"].items())
            + " |"
        )
    return [
        f"proxy, {p['clients']} clients, {p['cassettes']} cassettes of the {int(p['suite']):,} "
        "suite:",
        "",
        "| phase | exchanges | wall s | exchanges/s | proxy CPU s | clients CPU s | answers |",
        "|---|---:|---:|---:|---:|---:|---|",
        *rows,
    ]


def _extras(results: dict[str, Any]) -> list[str]:
    lines = []
    help_ = results.get("help")
    if help_:
        lines.append(
            f"fcreplay --help: {help_['seconds'] * 1000:.0f} ms median of {len(help_['runs'])} "
            f"(bare `python -c pass`: {help_['python_baseline_seconds'] * 1000:.0f} ms); heavy "
            f"modules imported: {', '.join(help_['heavy_imported']) or 'none'}"
        )
    example = results.get("example")
    if example:
        lines.append(
            f"example check (repository root): {example['seconds'] * 1000:.0f} ms median of "
            f"{len(example['plain']['runs'])}; {example['plain']['summary'][:90]}"
        )
    for name, data in results.get("bytes", {}).items():
        lines.append(
            f"bytes per exchange, {name} ({data['folder']}): {data['bytes']:,} bytes / "
            f"{data['exchanges']:,} exchanges = {data['kb_per_exchange']:.1f} KB"
        )
    inspect = results.get("inspect")
    if inspect:
        lines.append(
            f"inspect over the corpus: {inspect['seconds'] * 1000:.0f} ms median of "
            f"{len(inspect['runs'])}, {inspect['files']} files, {inspect['exchanges']} exchanges"
            if inspect.get("available")
            else f"inspect over the corpus: skipped ({inspect['note']})"
        )
    return lines


def _record(results: dict[str, Any]) -> list[str]:
    record = results.get("record")
    if not record:
        return []
    lines = [
        f"recording the first {len(record['cases'])} case(s) of the {record['suite']:,} suite over "
        f"HTTP (simulator latency {record['latency'] * 1000:.0f} ms per answer):",
        "",
        "| concurrency | attempts | exchanges | record s | attempts/s | exchanges/s | CPUs busy | "
        "log complete | log in plan order |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for concurrency, run in record["runs"].items():
        lines.append(
            f"| {concurrency} | {run['attempts']} | {run['exchanges']} | {run['seconds']:.2f} | "
            f"{run['attempts_per_second']:.1f} | {run['exchanges_per_second']:.1f} | "
            f"{run['cpu_busy']:.2f} | {'yes' if run['log_complete'] else 'NO'} | "
            f"{'yes' if run['log_in_plan_order'] else 'NO'} |"
        )
    lines.append(f"\nthroughput speed-up at concurrency 16: {record['speedup']:.1f}x")
    return lines
