"""A catalogue of malformed inputs, per kind of file fcreplay reads, and bad options.

Every entry must end in exit 2 with `FILE[:LINE]: what is wrong` on stderr, never a
traceback: `cli.run` re-raises anything unexpected, so an uncaught exception fails
the test with its traceback.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fcreplay.cli import run

from .conftest import ROOT
from .records import record_json

UNIT = ("sim-openai-chat", "auto", "direct_lookup")
SELECT = ["--target", UNIT[0], "--variant", UNIT[1], "--case", UNIT[2]]
DEEP = "[" * 5000 + "]" * 5000
DEEPISH = "[" * 70 + "]" * 70  # past the default max_json_depth, within Python's parser
DEEP_YAML = "interactions:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(80))


@dataclass(frozen=True)
class Entry:
    """One malformed input: which file, what it holds, and the command that reads it."""

    file: str
    """Relative to the suite folder."""
    text: str | bytes | None
    """What the file holds (None: remove it)."""
    command: tuple[str, ...]
    expected: str = ""
    """A fragment the message must hold."""


def contract(text: str | bytes, expected: str = "") -> Entry:
    return Entry("contracts/delivery_tools.json", text, ("lint",), expected)


def case_line(line: str, expected: str = "") -> Entry:
    good = (ROOT / "cases" / "delivery.jsonl").read_text(encoding="utf-8")
    return Entry("cases/delivery.jsonl", good + line + "\n", ("lint",), expected)


def results(text: str, expected: str = "") -> Entry:
    return Entry("cases/delivery_results.json", text, ("lint",), expected)


def config(line: str, expected: str = "") -> Entry:
    return Entry("fcreplay.toml", line, ("lint",), expected)


def cassette(text: str | bytes, expected: str = "", suffix: str = "json") -> Entry:
    name = f"cassettes/{'/'.join(UNIT)}.json"
    return Entry(name, text, ("replay", *SELECT), expected)


def run_log(line: str, expected: str = "") -> Entry:
    # Named: a log without its run-end is unfinished, and only a named one is read.
    name = "runs/20260101T000000000Z-replay-aaaaaa.jsonl"
    return Entry(name, line, ("report", name), expected)


def golden(text: str, expected: str = "") -> Entry:
    return Entry("golden/sim-openai-chat.json", text, ("golden", "diff"), expected)


def script(text: str, expected: str = "") -> Entry:
    return Entry(
        "script.json", text, ("simulate", "--port", "0", "--script", "script.json"), expected
    )


def record_with(**changes: object) -> str:
    record = record_json()
    for key, value in changes.items():
        if value is _DROP:
            record.pop(key, None)
        else:
            record[key] = value
    return json.dumps(record, allow_nan=True)


_DROP = object()


def vcr(
    status: object = 200, body: object = '{"a": 1}', headers: object = None, **more: object
) -> str:
    response: dict[str, object] = {"status": {"code": status, "message": "OK"}, "body": body}
    if headers is not None:
        response["headers"] = headers
    interaction = {
        "request": {"method": "POST", "uri": "http://h/v1/chat/completions", "body": "{}"},
        "response": response,
        **more,
    }
    return json.dumps({"version": 1, "interactions": [interaction]}, allow_nan=True)


def own(label: object) -> str:
    good = json.loads((ROOT / "cassettes" / Path(*UNIT).with_suffix(".json")).read_text("utf-8"))
    good["interactions"][0]["label"] = label
    return json.dumps(good, ensure_ascii=False)


def shared_with(change: Callable[[dict[str, object]], None]) -> str:
    good = json.loads((ROOT / "cassettes" / Path(*UNIT).with_suffix(".json")).read_text("utf-8"))
    change(good)
    return json.dumps(good, ensure_ascii=False)


def _rename_reference(document: dict[str, Any]) -> None:
    document["interactions"][1]["request"]["parsed_body"]["tools"] = {"$fcreplay_shared": "tools-0"}


def _widen_reference(document: dict[str, Any]) -> None:
    document["interactions"][0]["request"]["parsed_body"]["tools"]["note"] = "x"


GOOD_GOLDEN = json.loads((ROOT / "golden" / "sim-openai-chat.json").read_text(encoding="utf-8"))


def golden_with(change: Callable[[dict[str, object]], None]) -> str:
    document = json.loads(json.dumps(GOOD_GOLDEN))
    change(document)
    return json.dumps(document, allow_nan=True)


def _entry(document: dict[str, object]) -> dict[str, object]:
    return document["entries"]["direct_lookup"]["auto"]  # type: ignore[index, no-any-return]


def _set(key: str, value: object) -> Callable[[dict[str, object]], None]:
    return lambda d: _entry(d).__setitem__(key, value)


def _signature(value: object) -> Callable[[dict[str, object]], None]:
    return lambda d: _entry(d)["signatures"][0].__setitem__("signature", value)  # type: ignore[index]


def _count(value: object) -> Callable[[dict[str, object]], None]:
    return lambda d: _entry(d)["signatures"][0].__setitem__("count", value)  # type: ignore[index]


def alias_bomb() -> str:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    for level in range(1, 9):
        lines.append(f"a{level}: &a{level} [{','.join([f'*a{level - 1}'] * 9)}]")
    return "\n".join(lines) + "\ninteractions: [*a8]\n"


CATALOGUE: dict[str, Entry] = {
    # --- contract -----------------------------------------------------------------------
    "contract-not-json": contract("[{", "not valid JSON"),
    "contract-nan": contract('[{"name": "a", "x": NaN}]', "not a finite number"),
    "contract-infinity": contract('[{"name": "a", "x": -Infinity}]', "not a finite number"),
    "contract-1e999": contract('[{"name": "a", "x": 1e999}]', "not a finite number"),
    "contract-deep": contract(DEEP, "nested deeper"),
    "contract-deepish": contract(DEEPISH, "nested deeper"),
    "contract-huge-int": contract("[" + "9" * 5000 + "]", "unusable number"),
    "contract-object": contract("{}", "JSON array"),
    "contract-scalar": contract("3", "JSON array"),
    "contract-tool-string": contract('["x"]', "not a JSON object"),
    "contract-bad-name": contract('[{"name": "a b"}]', "tool name"),
    "contract-not-utf8": contract(b"\xff\xfe[]", "not UTF-8"),
    "contract-empty": contract("", "not valid JSON"),
    "contract-missing": Entry("contracts/delivery_tools.json", None, ("lint",), "not found"),
    "contract-deep-schema": contract(
        json.dumps([{"name": "a", "description": "d", "effect": "read", "parameters": DEEPISH}])
        .replace('"[[', "[[")
        .replace(']]"', "]]"),
        "nested deeper",
    ),
    # --- cases --------------------------------------------------------------------------
    "case-not-json": case_line("{", "not valid JSON"),
    "case-nan": case_line(
        '{"id": "x", "user": "u", "expect": {"kind": "text"}, "n": NaN}', "finite"
    ),
    "case-1e999": case_line('{"id": "x", "user": "u", "expect": {"kind": "text"}, "n": 1e999}'),
    "case-deep": case_line(DEEP, "nested deeper"),
    "case-deepish": case_line(DEEPISH, "nested deeper"),
    "case-array": case_line("[]", "JSON object"),
    "case-id-traversal": case_line('{"id": "../x", "user": "u", "expect": {"kind": "text"}}', "id"),
    "case-id-newline": case_line('{"id": "x\\n", "user": "u", "expect": {"kind": "text"}}', "id"),
    "case-id-number": case_line('{"id": 7, "user": "u", "expect": {"kind": "text"}}', "id"),
    "case-no-expect": case_line('{"id": "x", "user": "u"}', "expect"),
    "case-expect-list": case_line('{"id": "x", "user": "u", "expect": []}'),
    "case-unknown-tool": case_line(
        '{"id": "x", "user": "u", "expect": {"kind": "tool_call", "tool": "nope"}}'
    ),
    "case-duplicate": case_line((ROOT / "cases/delivery.jsonl").read_text("utf-8").split("\n")[0]),
    "case-bad-choice": case_line(
        '{"id": "x", "user": "u", "expect": {"kind": "text"}, "tool_choice": 3}'
    ),
    "case-huge-int": case_line('{"id": "x", "n": ' + "1" * 5000 + "}", "unusable number"),
    # --- tool results -------------------------------------------------------------------
    "results-not-json": results("{", "not valid JSON"),
    "results-nan": results('{"rules": [NaN]}', "finite"),
    "results-deep": results(DEEP, "nested deeper"),
    "results-deepish": results(DEEPISH, "nested deeper"),
    "results-array": results("[]"),
    "results-rules-object": results('{"rules": {}}'),
    "results-rule-string": results('{"rules": ["x"]}'),
    "results-unknown-tool": results('{"rules": [{"tool": "nope", "result": {}}]}'),
    "results-1e999": results('{"rules": [{"tool": "get_order", "result": {"x": 1e999}}]}'),
    # --- configuration ------------------------------------------------------------------
    "config-timeout-inf": config("request_timeout = inf", "finite"),
    "config-timeout-nan": config("request_timeout = nan", "finite"),
    "config-timeout-zero": config("request_timeout = 0", "greater than 0"),
    "config-timeout-negative": config("request_timeout = -3", "greater than 0"),
    "config-timeout-text": config('request_timeout = "3"', "seconds"),
    "config-deadline-inf": config("request_deadline = inf", "finite"),
    "config-deadline-bool": config("request_deadline = true", "finite"),
    "config-depth-zero": config("max_json_depth = 0", "at least 1"),
    "config-depth-huge": config("max_json_depth = 100000", "at most"),
    "config-body-float": config("max_body_bytes = 1.5", "whole number"),
    "config-ratio-text": config('max_decompression_ratio = "x"', "whole number"),
    "config-aliases-negative": config("max_yaml_alias_nodes = -1", "whole number"),
    "config-cassette-size-bool": config("max_cassette_bytes = false", "whole number"),
    "config-response-zero": config("max_response_bytes = 0", "whole number"),
    "config-secret-headers": config('secret_headers = ["bad header"]', "header names"),
    "config-temperature-nan": config("temperature = nan", "0 to 2"),
    "config-unknown": config("colour = 1", "unknown key"),
    "config-not-toml": config("= =", "not valid TOML"),
    "config-outside": config('golden = "../../elsewhere"', "outside the project"),
    "config-allow-text": config('allow_outside_project = "yes"', "true or false"),
    # --- cassettes ----------------------------------------------------------------------
    "cassette-garbage": cassette("{]", "not a readable cassette"),
    "cassette-deep-json": cassette(DEEP, "nested deeper"),
    "cassette-deepish-json": cassette('{"interactions": ' + DEEPISH + "}", "nested deeper"),
    "cassette-deep-yaml": cassette(DEEP_YAML, "nested deeper"),
    "cassette-nan": cassette('{"version": 1, "interactions": [NaN]}', "finite"),
    "cassette-1e999": cassette(vcr(status=1e999), "finite"),
    "cassette-status-inf-yaml": cassette(
        "interactions:\n- request: {method: POST, uri: 'http://h/v1/chat/completions'}\n"
        "  response: {status: {code: .inf}, body: {string: ''}}\n",
        "non-finite",
    ),
    "cassette-status-text": cassette(vcr(status="OK"), "status"),
    "cassette-status-999": cassette(vcr(status=999), "status"),
    "cassette-status-float": cassette(vcr(status=200.5), "status"),
    "cassette-status-bool": cassette(vcr(status=True), "status"),
    "cassette-status-list": cassette(vcr(status=[200]), "status"),
    "cassette-no-interactions": cassette('{"version": 1}', "holds no vcrpy"),
    "cassette-interactions-object": cassette('{"interactions": {}}', "holds no vcrpy"),
    "cassette-interaction-string": cassette('{"interactions": ["x"]}', "interaction 0"),
    "cassette-format-3": cassette('{"fcreplay": {"format": 3}, "interactions": []}', "format 3"),
    "cassette-format-true": cassette('{"fcreplay": {"format": true}, "interactions": []}'),
    "cassette-shared-unknown": cassette(shared_with(_rename_reference), "does not hold"),
    "cassette-shared-malformed": cassette(shared_with(_widen_reference), "must be an array"),
    "cassette-shared-list": cassette(
        shared_with(lambda document: document.__setitem__("shared", [])), "must be an object"
    ),
    "cassette-block-list": cassette('{"fcreplay": [], "interactions": []}', "must be an object"),
    "cassette-bad-base64": cassette(vcr(body={"base64_string": "!!"}), "base64"),
    "cassette-corrupt-gzip": cassette(
        vcr(body={"base64_string": "H4sIAAAAAAAAA6tW"}, headers={"content-encoding": ["gzip"]}),
        "gzip",
    ),
    "cassette-gzip-bomb": cassette(
        vcr(
            body={
                "base64_string": __import__("base64")
                .b64encode(gzip.compress(bytes(40 * 1024 * 1024), 1))
                .decode()
            },
            headers={"content-encoding": ["gzip"]},
        ),
        "max_body_bytes",
    ),
    "cassette-unknown-body": cassette(vcr(body={"what": 1}), "unknown body shape"),
    "cassette-label-attempt-text": cassette(own({"attempt": "1", "step": 0}), "label.attempt"),
    "cassette-label-attempt-float": cassette(own({"attempt": 1.5, "step": 0}), "label.attempt"),
    "cassette-label-attempt-zero": cassette(own({"attempt": 0, "step": 0}), "label.attempt"),
    "cassette-label-step-negative": cassette(own({"attempt": 1, "step": -1}), "label.step"),
    "cassette-label-step-bool": cassette(own({"attempt": 1, "step": True}), "label.step"),
    "cassette-alias-bomb": cassette(alias_bomb(), "max_yaml_alias_nodes"),
    "cassette-recursive-alias": cassette("interactions: &a [*a]\n", "recursive alias"),
    "cassette-binary": cassette(b"\x00\xff\x10", "not UTF-8"),
    "cassette-yaml-python-tag": cassette(
        "interactions: !!python/object/apply:os.system ['true']\n", "not a readable cassette"
    ),
    "cassette-yaml-broken": cassette("interactions: [\n", "not a readable cassette"),
    "cassette-headers-list": cassette(vcr(headers=[1, 2]), "interaction 0"),
    # --- run-log lines --------------------------------------------------------------------
    "runlog-not-json": run_log("{\n", "not valid JSON"),
    "runlog-deep": run_log(DEEP + "\n", "nested deeper"),
    "runlog-deepish": run_log(DEEPISH + "\n", "nested deeper"),
    "runlog-nan": run_log(record_with(elapsed_ms=float("nan")) + "\n", "finite"),
    "runlog-array": run_log("[]\n", "not a JSON object"),
    "runlog-no-target": run_log(record_with(target=_DROP) + "\n", "missing key 'target'"),
    "runlog-target-traversal": run_log(record_with(target="../../x") + "\n", "target"),
    "runlog-target-absolute": run_log(record_with(target="/etc/x") + "\n", "target"),
    "runlog-case-traversal": run_log(record_with(case_id="..") + "\n", "case_id"),
    "runlog-variant-slash": run_log(record_with(variant="a/b") + "\n", "variant"),
    "runlog-run-id-path": run_log(record_with(run_id="../r") + "\n", "run_id"),
    "runlog-attempt-text": run_log(record_with(attempt="1") + "\n", "attempt"),
    "runlog-attempt-float": run_log(record_with(attempt=1.0) + "\n", "attempt"),
    "runlog-elapsed-null": run_log(record_with(elapsed_ms=None) + "\n", "elapsed_ms"),
    "runlog-verdict": run_log(record_with(verdict="maybe") + "\n", "verdict"),
    "runlog-signature-short": run_log(record_with(signature=["text"]) + "\n", "signature"),
    "runlog-signature-types": run_log(record_with(signature=[1, 2, 3]) + "\n", "signature"),
    "runlog-steps-object": run_log(record_with(steps={}) + "\n", "not an attempt record"),
    "runlog-settings-extra": run_log(record_with(request_settings={"x": 1}) + "\n", "record"),
    "runlog-expect-string": run_log(record_with(expect="x") + "\n", "not an attempt record"),
    "runlog-findings-strings": run_log(record_with(findings=["x"]) + "\n", "not an attempt record"),
    "runlog-schema-3": run_log(record_with(schema_version=3) + "\n", "schema_version 3"),
    "runlog-transport-error-list": run_log(record_with(transport_error=[1]) + "\n", "record"),
    "runlog-header-bad": run_log('{"fcreplay_run": 1, "run_id": 3}\n', "not a run header"),
    "runlog-empty": run_log("", "no attempt records"),
    # --- golden files ---------------------------------------------------------------------
    "golden-not-json": golden("{", "not valid JSON"),
    "golden-deep": golden(DEEP, "nested deeper"),
    "golden-deepish": golden('{"entries": ' + DEEPISH + "}", "nested deeper"),
    "golden-nan": golden('{"fcreplay_golden": NaN}', "finite"),
    "golden-format-2": golden('{"fcreplay_golden": 2}', "golden format 2"),
    "golden-array": golden("[]", "golden format"),
    "golden-entries-list": golden(golden_with(lambda d: d.__setitem__("entries", [])), "golden"),
    "golden-signature-short": golden(golden_with(_signature(["tool_call"])), "signature"),
    "golden-signature-args": golden(golden_with(_signature(["text", [], "nope"])), "malformed"),
    "golden-signature-names": golden(golden_with(_signature(["text", [1], "[]"])), "signature"),
    "golden-count-text": golden(golden_with(_count("3")), "count"),
    "golden-count-zero": golden(golden_with(_count(0)), "count"),
    "golden-verdict": golden(golden_with(_set("verdict", "maybe")), "verdict"),
    "golden-verdicts-float": golden(golden_with(_set("verdicts", {"pass": 1.5})), "count"),
    "golden-findings-numbers": golden(golden_with(_set("findings", [1])), "finding code"),
    "golden-provenance-extra": golden(golden_with(_set("provenance", {"x": 1})), "malformed"),
    "golden-entry-missing-key": golden(golden_with(lambda d: _entry(d).pop("signatures")), "key"),
    # --- simulator script -----------------------------------------------------------------
    "script-not-json": script("{", "not valid JSON"),
    "script-deep": script(DEEP, "nested deeper"),
    "script-nan": script('{"cases": NaN}', "finite"),
    "script-array": script("[]"),
    "script-cases-list": script('{"cases": []}'),
}


OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "report-output-under-a-file": (("report", "--output", "fcreplay.toml/r.txt"), "cannot write"),
    "golden-diff-output-under-a-file": (
        ("golden", "diff", "--output", "fcreplay.toml/d.md"),
        "cannot write",
    ),
    "resume-path": (("record", *SELECT, "--resume", "/etc/passwd"), "not a run id"),
    "resume-traversal": (("record", *SELECT, "--resume", "../x"), "not a run id"),
    "resume-unknown": (("record", *SELECT, "--resume", "20260101T000000000Z-record-zzzzzz"), ""),
    "run-unknown": (("report", "no-such-run"), "no run"),
    "run-path-like": (("report", "../x/y"), "run log not found"),
    "config-missing": (("lint", "--config", "nope.toml"), "not found"),
    "config-directory": (("lint", "--config", "cases"), ""),
    "jobs-zero": (("replay", "--jobs", "0"), ""),
    "unknown-variant": (("replay", "--variant", "sideways"), ""),
    "unknown-target": (("replay", "--target", "nope"), "no target"),
    "unknown-case": (("replay", "--case", "nope"), "no case"),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small copy of the example suite: its files, one unit's cassette, the goldens and a
    replayed run log."""
    folder = tmp_path_factory.mktemp("suite")
    for name in ("contracts", "cases", "golden"):
        shutil.copytree(ROOT / name, folder / name)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = text[text.index("[tool.fcreplay]") :]
    (folder / "fcreplay.toml").write_text(
        table.replace("[tool.fcreplay]\n", "").replace("[[tool.fcreplay.targets]]", "[[targets]]"),
        encoding="utf-8",
    )
    unit = Path("cassettes", *UNIT).with_suffix(".json")
    (folder / unit).parent.mkdir(parents=True)
    shutil.copy(ROOT / unit, folder / unit)
    assert run(["replay", "--config", str(folder / "fcreplay.toml"), *SELECT]) == 0
    return folder


def prepared(base: Path, tmp_path: Path, entry: Entry | None = None) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(base, suite)
    if entry is not None:
        path = suite / entry.file
        if entry.file == "fcreplay.toml":
            assert isinstance(entry.text, str)
            path.write_text(_set_key(path.read_text("utf-8"), entry.text), encoding="utf-8")
        elif entry.text is None:
            path.unlink()
        else:
            if entry.file.startswith("runs/"):
                shutil.rmtree(suite / "runs")
            path.parent.mkdir(parents=True, exist_ok=True)
            data = entry.text.encode() if isinstance(entry.text, str) else entry.text
            path.write_bytes(data)
    return suite


def test_the_catalogue_is_large_enough() -> None:
    assert len(CATALOGUE) + len(OPTIONS) >= 100


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_a_malformed_input_exits_2_naming_its_file(
    name: str,
    base: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entry = CATALOGUE[name]
    suite = prepared(base, tmp_path, entry)
    monkeypatch.chdir(suite)
    code = run([*entry.command[:1], *_config(entry.command), *entry.command[1:]])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    # A run says which run it is before it reads any cassette; the error comes next.
    said = [line for line in err.splitlines() if not line.startswith(_RUN_START)]
    assert said[0].startswith((entry.file, str(suite / entry.file))), err
    assert entry.expected in err, err


_RUN_START = ("replay run ", "record run ", "resuming run ")


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_a_bad_option_exits_2_with_a_message(
    name: str,
    base: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    command, expected = OPTIONS[name]
    monkeypatch.chdir(prepared(base, tmp_path))
    code = run(list(command))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.strip()
    assert expected in err


def _set_key(text: str, line: str) -> str:
    # The entry's line replaces the key's own line, or goes first when the key is unset.
    key = line.split("=")[0].strip()
    pattern = re.compile(rf"^{re.escape(key)} = .*$", re.MULTILINE) if key else None
    if pattern is not None and pattern.search(text):
        return pattern.sub(lambda _: line, text, count=1)
    return line + "\n" + text


def _config(command: tuple[str, ...]) -> list[str]:
    # `golden diff` takes --config after its subcommand; simulate reads --script only.
    if command[0] in ("golden", "simulate"):
        return []
    return ["--config", "fcreplay.toml"]
