"""The naive baseline: replay every cassette with vcrpy's defaults, the way a user would.

    python benchmarks/naive_vcrpy.py YAML_FOLDER REQUESTS_JSON

One `vcr.use_cassette` per cassette (vcrpy's default YAML serializer, record mode
"none"), one httpx request per recorded exchange inside it, and the body parsed:
JSON, or the SSE events' data. REQUESTS_JSON lists, per cassette (path relative to
YAML_FOLDER), the requests the test sends: [method, url, headers, body text].
Prints one JSON line: exchanges replayed and the seconds spent loading the request
list and replaying.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import vcr


def parse_body(response: httpx.Response) -> Any:
    """The body as a test would read it: JSON, or the list of SSE data payloads."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        events = []
        for line in response.text.splitlines():
            if line.startswith("data:"):
                data = line[5:].strip()
                try:
                    events.append(json.loads(data))
                except ValueError:
                    events.append(data)  # e.g. "[DONE]"
        return events
    return response.json()


def main(argv: list[str]) -> int:
    folder, listing = Path(argv[0]), Path(argv[1])
    started = time.perf_counter()
    plan: dict[str, list[list[Any]]] = json.loads(listing.read_text(encoding="utf-8"))
    loaded = time.perf_counter()
    recorder = vcr.VCR(record_mode="none")
    exchanges = 0
    with httpx.Client() as client:
        for name, requests in plan.items():
            with recorder.use_cassette(str(folder / name)):
                for method, url, headers, body in requests:
                    response = client.request(method, url, headers=headers, content=body)
                    parse_body(response)
                    exchanges += 1
    done = time.perf_counter()
    result = {
        "exchanges": exchanges,
        "load_seconds": loaded - started,
        "replay_seconds": done - loaded,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
