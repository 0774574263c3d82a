"""Agreement of fcreplay's verdict with BFCL's own AST checker, on calls made from BFCL's answers.

    python benchmarks/bfcl_agreement.py                      every entry of the ten categories
    python benchmarks/bfcl_agreement.py --perturbed 6        more perturbed calls per entry
    python benchmarks/bfcl_agreement.py --category parallel --limit 50 --show 20

For every entry of each category: one correct output (an answer drawn from each
parameter's possible answers) and `--perturbed` outputs with one change each (a value,
a string's case or punctuation, int/float, a number as text, a parameter dropped or
added, null, a function name, the number or order of calls). Each is judged by BFCL's
`ast_checker` (bfcl-eval 2026.3.23; its relevance rule for irrelevance) and by fcreplay
on the suite `fcreplay import bfcl` writes. Prints the agreement per category and
every disagreement with both verdicts. Needs the wheel (see tests/bfcl_oracle.py).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fcreplay.importers.bfcl import NAMES, import_bfcl, write_suite  # noqa: E402
from fcreplay.importers.bfcl_data import CATEGORIES  # noqa: E402
from fcreplay.importers.bfcl_judge import judge_output, load_names  # noqa: E402
from fcreplay.inputs.suite import load_suite  # noqa: E402
from tests.bfcl_oracle import (  # noqa: E402
    Oracle,
    data_folder,
    load_oracle,
    obtain_wheel,
    outputs,
    read_category,
)


@dataclass
class Tally:
    """Counts of one category."""

    calls: int = 0
    agree: int = 0
    bfcl_valid: int = 0
    checker_errors: int = 0
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)


def measure(
    oracle: Oracle,
    data: Path,
    categories: list[str],
    *,
    limit: int | None,
    perturbed: int,
    seed: int,
    workdir: Path,
) -> dict[str, Tally]:
    """Judge every generated output both ways, per category."""
    suite_dir = workdir / "suite"
    write_suite(import_bfcl(data, categories, limit=limit), suite_dir)
    suite = load_suite(suite_dir / "fcreplay.toml")
    names = load_names(suite_dir / NAMES)
    cases = {case.id: case for case in suite.cases}
    tallies: dict[str, Tally] = {}
    for category in categories:
        tally = tallies[category] = Tally()
        rng = random.Random(f"{seed}:{category}")
        for entry, truth in read_category(data, category)[:limit]:
            case = cases[entry["id"]]
            for kind, output in outputs(entry, truth, rng, perturbed):
                try:
                    bfcl = oracle.valid(category, entry, truth, output)
                except Exception as exc:  # BFCL's checker itself fails on this input
                    tally.checker_errors += 1
                    tally.kinds[f"checker error: {type(exc).__name__}"] += 1
                    continue
                findings = judge_output(case, suite.contract, names, output)
                ours = not findings
                tally.calls += 1
                tally.bfcl_valid += bfcl
                if ours == bfcl:
                    tally.agree += 1
                else:
                    tally.kinds[kind] += 1
                    tally.disagreements.append(
                        {
                            "id": entry["id"],
                            "kind": kind,
                            "output": output,
                            "bfcl": bfcl,
                            "fcreplay": [f"{f.code} {f.path}: {f.message}" for f in findings],
                        }
                    )
    return tallies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--category", action="append", choices=CATEGORIES)
    parser.add_argument("--limit", type=int, help="entries per category (default: all)")
    parser.add_argument("--perturbed", type=int, default=4, help="perturbed outputs per entry")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--show", type=int, default=1000, help="disagreements to print")
    args = parser.parse_args()
    wheel = obtain_wheel()
    if wheel is None:
        print("bfcl-eval wheel not available (pip download failed)", file=sys.stderr)
        return 2
    oracle = load_oracle(wheel)
    categories = args.category or list(CATEGORIES)
    with tempfile.TemporaryDirectory() as folder:
        tallies = measure(
            oracle,
            data_folder(wheel),
            categories,
            limit=args.limit,
            perturbed=args.perturbed,
            seed=args.seed,
            workdir=Path(folder),
        )
    print("| category | calls | BFCL valid | agree | agreement | checker errors |")
    print("|---|---:|---:|---:|---:|---:|")
    total = agree = 0
    for category, tally in tallies.items():
        total += tally.calls
        agree += tally.agree
        share = 100 * tally.agree / tally.calls if tally.calls else 100.0
        print(
            f"| {category} | {tally.calls} | {tally.bfcl_valid} | {tally.agree} | "
            f"{share:.2f}% | {tally.checker_errors} |"
        )
    print(f"| all | {total} | | {agree} | {100 * agree / max(total, 1):.2f}% | |")
    kinds: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    for tally in tallies.values():
        kinds.update(tally.kinds)
        for item in tally.disagreements:
            codes.update({line.split()[0] for line in item["fcreplay"]} or {"(fcreplay passes)"})
    print(f"\ndisagreements by perturbation: {dict(kinds) or 'none'}")
    print(f"disagreements by fcreplay finding: {dict(codes) or 'none'}")
    shown = 0
    for category, tally in tallies.items():
        for item in tally.disagreements:
            if shown >= args.show:
                break
            shown += 1
            verdict = (
                "BFCL valid, fcreplay fails" if item["bfcl"] else "BFCL invalid, fcreplay passes"
            )
            print(
                f"\n{category} {item['id']} [{item['kind']}] {verdict}\n  output: {item['output']}"
            )
            for line in item["fcreplay"]:
                print(f"  fcreplay: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
