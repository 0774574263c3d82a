"""Fuzzers: every adapter's parsers, every cassette reader and every loader, on mutated input.

Adapters must return a Decision or a ProviderError (and what follows, the signature
and its canonical JSON, must work); readers and loaders must return or raise
InputError, never anything else. `benchmarks/fuzz.py` runs the same mutations at
scale (100,000 and more).
"""

from __future__ import annotations

import contextlib
import json
import random
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fcreplay.cassettes.store import load_cassette
from fcreplay.decision import ProviderError
from fcreplay.errors import InputError
from fcreplay.golden.store import load_golden
from fcreplay.inputs.cases import load_cases
from fcreplay.inputs.contract import Contract, load_contract
from fcreplay.inputs.tool_results import load_executor
from fcreplay.runlog import read_run_log
from fcreplay.simulator.server import load_script

from .conftest import ROOT
from .mutations import Sample, exercise, mutate, samples

FUZZ = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
"""Deadline-free: a slow example is not a failure; enough examples to matter, a few
seconds each."""

SAMPLES = samples()
APIS = sorted({sample.api for sample in SAMPLES})


def of_api(api: str, streamed: bool) -> list[Sample]:
    return [s for s in SAMPLES if s.api == api and (s.events is not None) == streamed]


@pytest.mark.parametrize("streamed", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("api", APIS)
def test_adapter_parsers_never_raise_on_mutated_answers(api: str, streamed: bool) -> None:
    pool = of_api(api, streamed)
    assert pool, f"no {api} sample"

    @FUZZ
    @given(st.randoms(use_true_random=False), st.integers(0, len(pool) - 1))
    def check(rng: random.Random, index: int) -> None:
        exercise(pool[index], rng)

    check()


def test_the_three_root_causes_found_before_stay_fixed() -> None:
    from fcreplay.adapters.registry import get_adapter
    from fcreplay.decision import Decision, signature
    from fcreplay.neutral import StreamEvent

    chat = get_adapter("openai_chat")
    body = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "get_order", "arguments": '{"a": NaN}'},
                        }
                    ],
                },
            }
        ]
    }
    decision = chat.parse_decision(200, body)
    assert isinstance(decision, Decision)
    assert decision.calls[0].arguments is None  # invalid_json, raw text kept
    assert decision.calls[0].raw_arguments == '{"a": NaN}'
    signature(decision)
    anthropic = get_adapter("anthropic")
    for kind in (["tool_use"], {"a": 1}):
        events = [
            StreamEvent(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": kind}},
            ),
            StreamEvent(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta"}},
            ),
            StreamEvent(
                "content_block_start",
                {"type": "content_block_start", "index": 10**12, "content_block": {}},
            ),
        ]
        # A stream with no terminal event is a failure to answer, never a decision.
        assert isinstance(anthropic.parse_stream(200, events), ProviderError)


CASSETTES = sorted((ROOT / "cassettes").rglob("*.json"))


@FUZZ
@given(st.randoms(use_true_random=False), st.sampled_from(CASSETTES[:40]), st.booleans())
def test_cassette_readers_return_or_raise_input_error(
    tmp_path_factory: pytest.TempPathFactory, rng: random.Random, source: Path, as_yaml: bool
) -> None:
    document = mutate(json.loads(source.read_text(encoding="utf-8")), rng, times=4)
    if as_yaml:
        import yaml

        document = _vcr_form(document)
        text = yaml.safe_dump(document, allow_unicode=True)
    else:
        text = json.dumps(document, allow_nan=True)
    if rng.random() < 0.2:
        cut = rng.randrange(len(text) + 1)
        text = text[:cut]
    path = tmp_path_factory.mktemp("c") / ("c.yaml" if as_yaml else "c.json")
    path.write_text(text, encoding="utf-8")
    with contextlib.suppress(InputError):
        load_cassette(path)


def _vcr_form(document: Any) -> Any:
    # Other tools' layout: bodies as strings, the way vcrpy writes YAML.
    if isinstance(document, dict) and isinstance(document.get("interactions"), list):
        for item in document["interactions"]:
            if isinstance(item, dict) and isinstance(item.get("response"), dict):
                response = item["response"]
                if "parsed_body" in response:
                    response["body"] = {"string": json.dumps(response.pop("parsed_body"))}
        document.pop("fcreplay", None)
    return document


LOADED = {
    "contract": ROOT / "contracts" / "delivery_tools.json",
    "results": ROOT / "cases" / "delivery_results.json",
    "golden": ROOT / "golden" / "sim-openai-chat.json",
    "script": ROOT / "cases" / "delivery_simulator.json",
}


@FUZZ
@given(st.randoms(use_true_random=False), st.sampled_from(sorted(LOADED)))
def test_json_loaders_return_or_raise_input_error(
    tmp_path_factory: pytest.TempPathFactory, contract: Contract, rng: random.Random, kind: str
) -> None:
    document = mutate(json.loads(LOADED[kind].read_text(encoding="utf-8")), rng, times=4)
    folder = tmp_path_factory.mktemp("l")
    path = folder / ("sim-openai-chat.json" if kind == "golden" else f"{kind}.json")
    path.write_text(json.dumps(document, allow_nan=True), encoding="utf-8")
    # A mutated regex may draw a FutureWarning from `re`; a warning is not a crash.
    with contextlib.suppress(InputError), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        if kind == "contract":
            load_contract(path)
        elif kind == "results":
            load_executor(path, contract)
        elif kind == "golden":
            load_golden(folder, "sim-openai-chat")
        else:
            load_script(path)


CASE_LINES = (ROOT / "cases" / "delivery.jsonl").read_text(encoding="utf-8").splitlines()
LOG_LINES = (ROOT / "tests" / "data" / "runlog.jsonl").read_text("utf-8").splitlines()


@FUZZ
@given(st.randoms(use_true_random=False), st.booleans())
def test_line_loaders_return_or_raise_input_error(
    tmp_path_factory: pytest.TempPathFactory, contract: Contract, rng: random.Random, cases: bool
) -> None:
    lines = CASE_LINES if cases else LOG_LINES
    chosen = rng.randrange(len(lines))
    mutated = list(lines)
    mutated[chosen] = json.dumps(mutate(json.loads(lines[chosen]), rng), allow_nan=True)
    path = tmp_path_factory.mktemp("j") / "lines.jsonl"
    path.write_text("\n".join(mutated) + "\n", encoding="utf-8")
    with contextlib.suppress(InputError):
        load_cases(path, contract) if cases else read_run_log(path)
