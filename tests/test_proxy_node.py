"""A non-Python client: the official `openai` npm package records and replays through the proxy.

Skipped when Node.js or the package is absent; `.ci/run` installs the package
(`npm ci` in tests/node) where npm is available. The replay runs with the
simulator stopped, no upstream, and, where `unshare` allows, in a network
namespace of its own with nothing but a loopback interface.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fcreplay.check_traffic import check_traffic
from fcreplay.inputs.contract import load_contract
from fcreplay.runlog import read_run_log
from fcreplay.simulator.server import running_simulator

from .conftest import CONTRACT, ROOT
from .offline_node import NODE_DIR, run_client
from .proxy_support import FAKE_KEY, SCRIPT, proxy, written_text

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js on this machine"),
    pytest.mark.skipif(
        not (NODE_DIR / "node_modules" / "openai").is_dir(),
        reason="the openai npm package is not installed (npm ci --prefix tests/node)",
    ),
]
WANTED = ['get_order {"order_id":"ORD-123456"}']


def isolated() -> list[str]:
    """The command prefix for a process without network, or [] where that is not possible."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return []
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        return []
    return ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


def test_the_node_openai_package_records_then_replays_offline(tmp_path: Path) -> None:
    with (
        running_simulator(SCRIPT) as upstream,
        proxy(tmp_path, record_mode="once", upstreams=(upstream,)) as running,
    ):
        recorded = run_client(running.url, "node/lookup", FAKE_KEY)
        assert dict(running.journal.counts) == {"recorded": 3}
    assert recorded["plain"] == WANTED and recorded["streamed"] == WANTED
    assert isinstance(recorded["events"], int) and recorded["events"] > 3
    assert "ORD-123456" in str(recorded["then"])
    cassettes, runs = tmp_path / "cassettes", tmp_path / "runs"
    cassette = cassettes / "node" / "lookup.json"
    before = cassette.read_bytes()

    command = [sys.executable, "-m", "tests.offline_node", str(cassettes), str(runs)]
    done = subprocess.run(
        [*isolated(), *command, "node/lookup", FAKE_KEY],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    replayed = json.loads(done.stdout.strip().splitlines()[-1])
    assert replayed == {"client": recorded, "counts": {"replayed": 3}}
    assert cassette.read_bytes() == before

    result = check_traffic(cassettes, load_contract(CONTRACT), run_id="node")
    assert result.ok and not result.problems, result.summary()
    kinds = [step.decision.kind for r in result.records for step in r.steps]
    assert kinds == ["tool_call", "tool_call", "text"]
    logged = [r for log in sorted(runs.glob("*.jsonl")) for r in read_run_log(log).records]
    assert len(logged) == 6 and all(r.verdict == "pass" for r in logged)
    assert FAKE_KEY not in written_text(tmp_path)
