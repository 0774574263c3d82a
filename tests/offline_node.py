"""Replay for the Node.js test, in a process of its own (run it with no network at all).

`python -m tests.offline_node CASSETTES RUNS CASSETTE` serves CASSETTES in record
mode none with no upstream, runs the Node.js client against it, and prints one
JSON line: the client's own output and what the proxy counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fcreplay.proxy.app import ProxyOptions, running_proxy

from .conftest import CONTRACT

NODE_DIR = Path(__file__).resolve().parent / "node"


def run_client(url: str, cassette: str, key: str) -> dict[str, object]:
    """Run the Node.js client against the proxy at `url`; its JSON output."""
    done = subprocess.run(
        ["node", str(NODE_DIR / "client.mjs"), url, cassette, str(CONTRACT)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "FAKE_OPENAI_KEY": key},
    )
    if done.returncode != 0:
        raise RuntimeError(f"node client failed:\n{done.stdout}\n{done.stderr}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(cassettes: str, runs: str, cassette: str, key: str) -> None:
    options = ProxyOptions(cassette_dir=Path(cassettes), runs=Path(runs), record_mode="none")
    with running_proxy(options) as running:
        client = run_client(running.url, cassette, key)
        counts = dict(running.journal.counts)
    print(json.dumps({"client": client, "counts": counts}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
