"""Suite configuration: discovery, defaults, and errors that name the key and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from fcreplay.errors import InputError
from fcreplay.inputs.config import find_config, load_config

BASE = """\
contract = "contracts/delivery_tools.json"
cases = "cases/delivery.jsonl"
"""
TARGET = """
[[targets]]
name = "sim-openai"
adapter = "openai_chat"
model = "fcreplay-simulator"
base_url = "http://127.0.0.1:8765/v1"
api_key_env = "OPENAI_API_KEY"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fcreplay.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_and_paths_relative_to_the_config(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, BASE + TARGET))
    assert config.contract == tmp_path / "contracts" / "delivery_tools.json"
    assert config.runs == tmp_path / "runs"
    assert config.variants == ("auto",) and config.repetitions == 1
    (target,) = config.targets
    assert target.adapter == "openai_chat" and target.api_key_env == "OPENAI_API_KEY"
    assert config.target("sim-openai") is target


def test_example_config_in_pyproject(suite_dir: Path) -> None:
    config = load_config(suite_dir / "fcreplay.toml")
    assert config.variants == ("auto", "forced", "no_tools", "reversed")
    assert config.parallel_tool_calls is False and config.repetitions == 3


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ("repetitons = 3\n", "repetitons", "unknown key"),
        ("repetitions = 0\n", "repetitions", "at least 1"),
        ("temperature = 5\n", "temperature", "from 0 to 2"),
        ('variants = ["auto", "sideways"]\n', "variants", "drawn from"),
        ("parallel_tool_calls = 1\n", "parallel_tool_calls", "true or false"),
    ],
)
def test_bad_suite_keys_are_named_with_their_line(
    tmp_path: Path, extra: str, key: str, message: str
) -> None:
    path = write(tmp_path, BASE + extra)
    with pytest.raises(InputError) as caught:
        load_config(path)
    (problem,) = caught.value.problems
    assert problem.line == 3 and key in problem.message and message in problem.message


@pytest.mark.parametrize(
    ("replace", "by", "message"),
    [
        ('adapter = "openai_chat"', 'adapter = "openai"', "must be one of"),
        ('api_key_env = "OPENAI_API_KEY"', 'api_key_env = "sk-abc-123"', "NAME of an environment"),
        ('name = "sim-openai"', 'name = "sim openai"', "folder name"),
        ('base_url = "http://127.0.0.1:8765/v1"', 'base_url = "127.0.0.1"', "http"),
        ('model = "fcreplay-simulator"', 'modle = "x"', "unknown key"),
    ],
)
def test_bad_target_keys(tmp_path: Path, replace: str, by: str, message: str) -> None:
    path = write(tmp_path, BASE + TARGET.replace(replace, by))
    with pytest.raises(InputError) as caught:
        load_config(path)
    (problem,) = caught.value.problems
    assert message in problem.message and "targets[0]" in problem.message
    assert problem.line is not None and problem.line > 4


def test_missing_required_key(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cases is required"):
        load_config(write(tmp_path, 'contract = "x.json"\n'))


def test_discovery_walks_up_and_prefers_fcreplay_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fcreplay]\n" + BASE, encoding="utf-8")
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    assert find_config().resolve() == tmp_path / "pyproject.toml"
    write(tmp_path / "a", BASE)
    assert find_config().resolve() == tmp_path / "a" / "fcreplay.toml"


def test_no_configuration_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="--config PATH"):
        find_config(tmp_path)


def test_fcreplay_toml_may_hold_a_tool_fcreplay_table(tmp_path: Path) -> None:
    tabled = (
        "[tool.fcreplay]\n"
        + BASE
        + "repetitions = 2\n"
        + TARGET.replace("[[targets]]", "[[tool.fcreplay.targets]]")
    )
    config = load_config(write(tmp_path, tabled))
    assert config.repetitions == 2 and config.targets[0].name == "sim-openai"
    with pytest.raises(InputError) as caught:
        load_config(write(tmp_path, tabled.replace("repetitions = 2", "repetitons = 2")))
    assert str(caught.value.problems[0]).startswith(f"{tmp_path / 'fcreplay.toml'}:4: ")
    assert "tool.fcreplay.repetitons: unknown key" in str(caught.value.problems[0])
