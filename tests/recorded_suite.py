"""A small suite recorded against the bundled simulator, for report, golden and check tests.

SYNTHETIC: the script below is made up for these tests (two invented model
profiles); it says nothing about real models. The suite has its own cases and
tool results so the tests do not depend on the example suite's recordings.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run
from fcreplay.engine import runner
from fcreplay.engine.runner import RunResult
from fcreplay.inputs.suite import load_suite
from fcreplay.simulator.server import base_urls, running_simulator

from .conftest import ROOT

CASES: list[dict[str, Any]] = [
    {
        "id": "lookup",
        "user": "Где заказ ORD-123456?",
        "expect": {
            "kind": "tool_call",
            "tool": "get_order",
            "arguments": {"order_id": "ORD-123456"},
        },
        "then": {"kind": "text", "contains_any": ["Самар"]},
    },
    {
        "id": "clarify",
        "user": "Где мой заказ?",
        "expect": {"kind": "text", "must_not_call": True, "contains_any": ["номер"]},
    },
    {
        "id": "cancel",
        "user": "Отмени ORD-654321, я передумал",
        "expect": {
            "kind": "tool_call",
            "tool": "cancel_order",
            "arguments": {"order_id": "ORD-654321", "reason": "changed_mind"},
        },
        "then": {"kind": "text", "contains_any": ["нельзя"], "must_not_contain": ["отменён"]},
    },
    {
        "id": "implicit",
        "user": "Кажется, заказ ORD-654321 мне уже не нужен",
        "expect": {"kind": "text", "must_not_call": True, "contains_any": ["отменить"]},
    },
]

RESULTS = {
    "rules": [
        {"tool": "get_order", "when": {"order_id": "ORD-123456"}, "result": {"city": "Самара"}},
        {
            "tool": "get_order",
            "error": {"code": "ORDER_NOT_FOUND", "message": "Не найден", "retryable": False},
        },
        {
            "tool": "cancel_order",
            "error": {"code": "ALREADY_SHIPPED", "message": "Уже передан", "retryable": False},
        },
    ]
}

_LOOKUP = {"calls": [{"name": "get_order", "arguments": {"order_id": "ORD-123456"}}]}
_CANCEL = {
    "calls": [
        {"name": "cancel_order", "arguments": {"order_id": "ORD-654321", "reason": "changed_mind"}}
    ]
}

SCRIPT: dict[str, Any] = {
    "note": "SYNTHETIC test script",
    "cases": {
        "lookup": {
            "user": "Где заказ ORD-123456?",
            "profiles": {
                "sim-careful": {"turns": [_LOOKUP, {"text": "Заказ в Самаре."}]},
                "sim-hasty": {"turns": [_LOOKUP, {"text": "Заказ в Самаре."}]},
            },
        },
        "clarify": {
            "user": "Где мой заказ?",
            "profiles": {
                "sim-careful": {"turns": [{"text": "Назовите номер заказа."}]},
                "sim-hasty": {
                    "turns": [
                        [
                            {"text": "Назовите номер заказа."},
                            {"calls": [{"name": "get_order", "arguments": {"order_id": "ORD-1"}}]},
                        ],
                        {"text": "Не найден, назовите номер."},
                    ]
                },
            },
        },
        "cancel": {
            "user": "Отмени ORD-654321, я передумал",
            "profiles": {
                "sim-careful": {"turns": [_CANCEL, {"text": "Отменить нельзя: заказ передан."}]},
                "sim-hasty": {"turns": [_CANCEL, {"text": "Готово, заказ отменён."}]},
            },
        },
        "implicit": {
            "user": "Кажется, заказ ORD-654321 мне уже не нужен",
            "profiles": {
                "sim-careful": {"turns": [{"text": "Хотите отменить заказ?"}]},
                "sim-hasty": {
                    "turns": [
                        {
                            "calls": [
                                {
                                    "name": "cancel_order",
                                    "arguments": {"order_id": "ORD-654321", "reason": "other"},
                                }
                            ]
                        },
                        {"text": "Отменить нельзя."},
                    ]
                },
            },
        },
    },
}

CONFIG = """\
contract = "contracts/delivery_tools.json"
system_prompt = "contracts/delivery_prompt.txt"
prompt_version = "test-prompt-v1"
cases = "cases/cases.jsonl"
cases_version = "test-cases-v1"
tool_results = "cases/results.json"
repetitions = 2
parallel_tool_calls = false
max_steps = 4
max_retries = 0
variants = ["auto", "forced", "no_tools", "reversed"]

[[targets]]
name = "careful"
adapter = "openai_chat"
model = "sim-careful"
base_url = "{openai_chat}"

[[targets]]
name = "hasty"
adapter = "anthropic"
model = "sim-hasty"
base_url = "{anthropic}"
stream = true
"""


def write_suite(root: Path, urls: dict[str, str]) -> Path:
    """Write the suite's files under `root`; return its config path."""
    (root / "contracts").mkdir(parents=True)
    (root / "cases").mkdir()
    for name in ("delivery_tools.json", "delivery_prompt.txt"):
        shutil.copy(ROOT / "contracts" / name, root / "contracts" / name)
    lines = [json.dumps(case, ensure_ascii=False) for case in CASES]
    (root / "cases" / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "cases" / "results.json").write_text(
        json.dumps(RESULTS, ensure_ascii=False), encoding="utf-8"
    )
    config = root / "fcreplay.toml"
    config.write_text(CONFIG.format(**urls), encoding="utf-8")
    return config


def record_suite(root: Path) -> RunResult:
    """Write the suite and record every unit against a simulator running for the call."""
    with running_simulator(SCRIPT) as url:
        config = write_suite(root, base_urls(url))
        return runner.record(load_suite(config), runner.RecordOptions())


def recorded_copy(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """A fresh copy of the suite recorded once per session (config, cassettes, run log)."""
    template = tmp_path_factory.getbasetemp() / "recorded-suite"
    if not template.exists():
        # Record beside the template and rename, so a failed recording leaves nothing behind.
        partial = tmp_path_factory.mktemp("recording")
        record_suite(partial / "suite")
        (partial / "suite").rename(template)
    copy = tmp_path / "suite"
    shutil.copytree(template, copy)
    return copy


def cli(suite: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the command line on the suite's config: exit code, stdout, stderr."""
    code = run([*args, "--config", str(suite / "fcreplay.toml")])
    out, err = capsys.readouterr()
    return code, out, err


def edit_argument(cassette: Path, key: str, value: Any, *, interaction: int = 0) -> None:
    """Change one argument of the first call in one recorded OpenAI Chat response, by hand."""
    document = json.loads(cassette.read_text(encoding="utf-8"))
    response = document["interactions"][interaction]["response"]["parsed_body"]
    function = response["choices"][0]["message"]["tool_calls"][0]["function"]
    arguments = json.loads(function["arguments"])
    arguments[key] = value
    function["arguments"] = json.dumps(arguments, ensure_ascii=False)
    cassette.write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")


def replay(suite: Path) -> RunResult:
    """Replay the suite at `suite` (writes a run log under its runs folder)."""
    return runner.replay(load_suite(suite / "fcreplay.toml"), runner.ReplayOptions())


def baseline(suite: Path) -> None:
    """Replay the suite at `suite` and make that run its golden baseline."""
    from fcreplay.cli import run

    config = str(suite / "fcreplay.toml")
    run_id = replay(suite).run_id
    assert (
        run(["golden", "update", "--run", run_id, "--reason", "baseline", "--config", config]) == 0
    )


def edit_text(cassette: Path, text: str, *, interaction: int) -> None:
    """Replace the text of one recorded OpenAI Chat answer, by hand."""
    document = json.loads(cassette.read_text(encoding="utf-8"))
    response = document["interactions"][interaction]["response"]["parsed_body"]
    response["choices"][0]["message"]["content"] = text
    cassette.write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
