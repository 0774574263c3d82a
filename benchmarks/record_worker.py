"""Record part of a suite against a running simulator and time `record` alone.

    python benchmarks/record_worker.py CONFIG CONCURRENCY CASE_ID [CASE_ID ...]

Runs in its own process so the simulator (in the harness process) and the
recorder do not share one interpreter lock. Prints one JSON line: the seconds
spent in `record` (suite loading and interpreter start-up excluded), the
attempts it ran and the run log it wrote.
"""

from __future__ import annotations

import json
import os
import sys
import time

from fcreplay.engine.progress import Progress
from fcreplay.engine.runner import RecordOptions, record
from fcreplay.inputs.suite import load_suite


def main(argv: list[str]) -> int:
    config, concurrency, case_ids = argv[0], int(argv[1]), tuple(argv[2:])
    suite = load_suite(config)
    with open(os.devnull, "w") as quiet:
        started = time.perf_counter()
        result = record(
            suite,
            RecordOptions(case_ids=case_ids, concurrency=concurrency),
            progress=Progress(0, stream=quiet),
        )
        seconds = time.perf_counter() - started
    print(
        json.dumps(
            {"seconds": seconds, "attempts": len(result.records), "log": str(result.log_path)}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
