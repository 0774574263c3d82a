"""The three bombs: each makes `fcreplay` exit 2 quickly and in little memory.

Each runs `python -m fcreplay` in a child process whose own peak memory (ru_maxrss
from wait4, taken by a small launcher) and wall time are measured, so nothing else in
the test run counts.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from .conftest import ROOT

SECONDS = 5.0
MEGABYTES = 300
INFLATED = 2 * 1024**3
"""What each decompression bomb's body decodes to: 2 GiB of zeros."""


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """About 2 MB of gzip that inflates to 2 GiB: 64 members of 32 MiB of zeros each
    (multi-member gzip is valid gzip and quick to build; one member of the same size
    behaves the same, it only takes seconds to compress)."""
    member = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    one = member.compress(bytes(INFLATED // 64)) + member.flush()
    return one * 64


_LAUNCHER = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "print(usage.ru_maxrss)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)
"""Starts the measured command from a small process: a child forked from a large one
(the test run itself) reports the parent's memory as its own peak."""


def run_measured(*args: str, cwd: Path) -> tuple[int, float, float, str]:
    """Exit code, seconds, peak MB and stderr of `python -m fcreplay ARGS`."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, sys.executable, "-m", "fcreplay", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    seconds = time.monotonic() - start
    return done.returncode, seconds, int(done.stdout.strip()) / 1024, done.stderr


def assert_refused(tmp_path: Path, path: Path, expected: str) -> None:
    code, seconds, megabytes, stderr = run_measured("inspect", str(path), cwd=tmp_path)
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert stderr.startswith(f"{path}"), stderr
    assert expected in stderr
    assert seconds < SECONDS, f"{seconds:.1f} s"
    assert megabytes < MEGABYTES, f"{megabytes:.0f} MB"


def test_a_yaml_cassette_with_a_gzip_body_of_2_gib_exits_2(
    tmp_path: Path, gzip_bomb: bytes
) -> None:
    encoded = base64.encodebytes(gzip_bomb).decode("ascii")
    body = "".join(f"        {line}\n" for line in encoded.splitlines())
    path = tmp_path / "bomb.yaml"
    path.write_text(
        "interactions:\n"
        "- request:\n"
        "    method: POST\n"
        "    uri: https://api.openai.com/v1/chat/completions\n"
        "    body: '{}'\n"
        "  response:\n"
        "    status: {code: 200, message: OK}\n"
        "    headers: {Content-Encoding: [gzip]}\n"
        "    body:\n"
        "      string: !!binary |\n" + body + "version: 1\n",
        encoding="ascii",
    )
    assert 2_500_000 < path.stat().st_size < 3_500_000
    assert_refused(tmp_path, path, "max_body_bytes")


def test_a_json_cassette_with_the_same_body_base64_encoded_exits_2(
    tmp_path: Path, gzip_bomb: bytes
) -> None:
    path = tmp_path / "bomb.json"
    interaction = {
        "request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages", "body": ""},
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-encoding": ["gzip"]},
            "body": {"base64_string": base64.b64encode(gzip_bomb).decode("ascii")},
        },
    }
    path.write_text(json.dumps({"version": 1, "interactions": [interaction]}), encoding="ascii")
    assert_refused(tmp_path, path, "max_body_bytes")


def test_a_one_kib_yaml_alias_bomb_exits_2(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        previous = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{','.join([previous] * 9)}]")
    lines.append("interactions: [*a9]")
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    assert path.stat().st_size <= 1024
    assert_refused(tmp_path, path, "max_yaml_alias_nodes")


def test_a_cassette_over_the_file_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    (tmp_path / "fcreplay.toml").write_text("", encoding="utf-8")
    with path.open("wb") as handle:
        handle.truncate(65 * 1024 * 1024)  # sparse: costs no disk
    assert_refused(tmp_path, path, "max_cassette_bytes")
