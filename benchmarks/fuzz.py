"""The large fuzz run: mutated provider answers through every adapter, mutated cassettes
through the readers; prints how many ran and how many raised.

    python benchmarks/fuzz.py                     # 100,000 answers, 10,000 cassettes
    python benchmarks/fuzz.py --answers 200000 --cassettes 50000 --seed 3

The mutations are those of the test suite's fuzzers (`tests/mutations.py`): real
answers of the example suite, each adapter's in both forms (body and stream), with
one to three places changed. An answer must parse to a Decision or a ProviderError
whose signature and canonical JSON can be made; a cassette must load or raise
InputError. Anything else is counted, grouped by where it was raised, and the first
example of each group is printed. Exit 1 if anything was.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fcreplay.cassettes.store import load_cassette  # noqa: E402
from fcreplay.errors import InputError  # noqa: E402
from tests.mutations import exercise, mutate, samples  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--cassettes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    failures: Counter[tuple[str, str, str]] = Counter()
    examples: dict[tuple[str, str, str], str] = {}

    def note(kind: str, exc: BaseException) -> None:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        key = (kind, type(exc).__name__, f"{Path(frame.filename).name}:{frame.lineno}")
        failures[key] += 1
        examples.setdefault(key, str(exc)[:160])

    pool = samples()
    per_api: Counter[str] = Counter()
    started = time.perf_counter()
    for number in range(args.answers):
        sample = pool[number % len(pool)]
        per_api[f"{sample.api} {'stream' if sample.events is not None else 'body'}"] += 1
        try:
            exercise(sample, rng)
        except Exception as exc:  # the point: count what escapes
            note(sample.api, exc)
    answers_seconds = time.perf_counter() - started

    sources = sorted((ROOT / "cassettes").rglob("*.json"))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for number in range(args.cassettes):
            source = sources[number % len(sources)]
            text = json.dumps(mutate(json.loads(source.read_text("utf-8")), rng, times=4))
            if rng.random() < 0.2:
                text = text[: rng.randrange(len(text) + 1)]
            path = Path(folder) / "c.json"
            path.write_text(text, encoding="utf-8")
            try:
                with contextlib.suppress(InputError), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    load_cassette(path)
            except Exception as exc:
                note("cassette", exc)
    cassettes_seconds = time.perf_counter() - started

    print(
        f"answers:   {args.answers:,} mutated in {answers_seconds:.1f} s, from {len(pool)} samples"
    )
    for name, count in sorted(per_api.items()):
        print(f"  {name:<24} {count:,}")
    print(f"cassettes: {args.cassettes:,} mutated in {cassettes_seconds:.1f} s")
    total = sum(failures.values())
    print(f"uncaught exceptions: {total:,}")
    for key, count in failures.most_common():
        print(f"  {count:,} {' '.join(key)}: {examples[key]}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
