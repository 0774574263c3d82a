"""Helpers for the proxy tests: a proxy and a simulator on loopback, tools, files, no network."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fcreplay.proxy.app import ProxyOptions, RunningProxy, running_proxy

from .conftest import CONTRACT, ROOT

SCRIPT = ROOT / "cases" / "delivery_simulator.json"
FAKE_KEY = "sk-test-proxyFAKE0123456789abcdefXYZ"
"""A key-shaped fake: it must reach the upstream and never any file."""
QUESTION = "Где заказ ORD-123456?"
"""A user message the simulator's script answers with a get_order call."""
MODEL = "fcreplay-sim-careful"


def contract_tools() -> list[dict[str, Any]]:
    """The example contract's tools, in OpenAI chat's wire format."""
    tools = json.loads(CONTRACT.read_text(encoding="utf-8"))
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t["description"],
                "parameters": t["parameters"],
            },
        }
        for t in tools
    ]


@contextmanager
def proxy(tmp_path: Path, **options: Any) -> Iterator[RunningProxy]:
    """A proxy on a free port, its cassettes and run log under `tmp_path`."""
    settings: dict[str, Any] = {"cassette_dir": tmp_path / "cassettes", "runs": tmp_path / "runs"}
    settings.update(options)
    with running_proxy(ProxyOptions(**settings)) as running:
        yield running


def written_text(folder: Path) -> str:
    """Everything written under `folder`, as one text."""
    return "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    )


def loopback_only(monkeypatch: pytest.MonkeyPatch, allowed_port: int) -> list[Any]:
    """Refuse every connection but those to 127.0.0.1:`allowed_port`; remember the others."""
    refused: list[Any] = []
    real = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[:2] == ("127.0.0.1", allowed_port):
            return real(self, address)
        refused.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", connect)
    return refused
