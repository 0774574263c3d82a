"""check's cache: a warm check prints and logs what a cold one does, replaying only what changed."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import fcreplay.cache.packing as packing
from fcreplay.cache.aside import SetAside
from fcreplay.cache.pack import MAGIC, copied, read_bodies, read_pack, write_pack
from fcreplay.cache.pieces import Aside, InBlock, after
from fcreplay.cache.stats import StatIndex
from fcreplay.check import run_check
from fcreplay.cli import run
from fcreplay.errors import SecretLeakError
from fcreplay.inputs.suite import load_suite
from fcreplay.record import AttemptRecord
from fcreplay.runlog import RunLogWriter

from .recorded_suite import baseline, edit_argument, recorded_copy

RUN_ID = re.compile(r"\d{8}T\d{9}Z-[a-z]+-[0-9a-f]{6}")
ATTEMPTS = 56
"""The recorded suite: 2 targets × (4 cases × 3 variants + 2 forced) × 2 repetitions."""


@pytest.fixture
def suite(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    copy = recorded_copy(tmp_path_factory, tmp_path)
    baseline(copy)
    return copy


def check(suite: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(["check", *args, "--config", str(suite / "fcreplay.toml")])
    out, err = capsys.readouterr()
    return code, out, err


def masked(text: str) -> str:
    return RUN_ID.sub("RUN", text)


def logged(out: str) -> list[dict[str, Any]]:
    """The run log `check` printed the path of, every line without run id and timing."""
    match = re.search(r"^replayed run \S+ \((.+)\)$", out, re.MULTILINE)
    assert match, out
    lines = []
    for line in Path(match.group(1)).read_text(encoding="utf-8").splitlines():
        document = json.loads(line)
        document.pop("run_id", None)
        document.pop("elapsed_ms", None)
        lines.append(document)
    return lines


def replayed(err: str) -> int:
    """How many attempts the check replayed (its first progress line says)."""
    match = re.search(r"replay run \S+: (\d+) attempts", err)
    assert match, err
    return int(match.group(1))


def test_a_warm_check_prints_and_logs_what_a_cold_one_does(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cold = check(suite, capsys, "--no-cache")
    warm = check(suite, capsys)
    again = check(suite, capsys)
    assert replayed(cold[2]) == ATTEMPTS
    assert replayed(warm[2]) == 0 and f"({ATTEMPTS} more known from the cache)" in warm[2]
    assert cold[0] == warm[0] == again[0] == 0
    assert masked(cold[1]) == masked(warm[1]) == masked(again[1])
    assert logged(cold[1]) == logged(warm[1]) == logged(again[1])
    assert len(logged(warm[1])) == ATTEMPTS + 2  # the header and the run-end


def test_without_a_cache_check_still_prints_the_same(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cache's tail (digests folded per target) against the records' (`build_report`,
    `diff_run`, the schema differ fed by the replay), on a run with findings of every
    kind the suite gives: a regression with evidence, changed and new entries."""
    edit_argument(suite / "cassettes" / "careful" / "auto" / "lookup.json", "order_id", "X-1")
    golden = suite / "golden" / "hasty.json"
    document = json.loads(golden.read_text(encoding="utf-8"))
    document["entries"].pop("implicit")  # its units are `new` now
    golden.write_text(json.dumps(document), encoding="utf-8")
    loaded = load_suite(suite / "fcreplay.toml")
    plain = run_check(loaded, cache=None)
    cached = run_check(loaded, cache=True)
    warm = run_check(loaded, cache=True)
    for result in (cached, warm):
        assert result.report == {**plain.report, "run_id": result.run.run_id}
        plain_golden = {**plain.golden.to_json(), "run_id": result.run.run_id}
        assert result.golden.to_json() == plain_golden
        assert result.schema == plain.schema
        assert result.counts() == plain.counts()
        assert result.summary() == plain.summary()
        assert [_timeless(r) for r in result.problems] == [_timeless(r) for r in plain.problems]
    assert {"regression", "new"} <= {d.kind for d in plain.golden.diffs}
    assert any(d.evidence for d in plain.golden.diffs)
    assert warm.counted is not None and warm.counted.reused == ATTEMPTS // 2


def _timeless(record: AttemptRecord) -> AttemptRecord:
    return replace(record, run_id="run", elapsed_ms=0)


def test_a_changed_cassette_is_replayed_and_its_change_shows(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = check(suite, capsys)
    edit_argument(suite / "cassettes" / "careful" / "auto" / "lookup.json", "order_id", "X-1")
    warm = check(suite, capsys)
    cold = check(suite, capsys, "--no-cache")
    assert replayed(warm[2]) == 2  # the unit's two repetitions
    assert warm[0] == 1 and "golden regression: careful/auto/lookup" in warm[1]
    assert masked(warm[1]) == masked(cold[1]) != masked(before[1])
    assert logged(warm[1]) == logged(cold[1]) != logged(before[1])


def _prompt(suite: Path) -> None:
    path = suite / "contracts" / "delivery_prompt.txt"
    path.write_text(path.read_text(encoding="utf-8") + "\nBe brief.\n", encoding="utf-8")


def _contract(suite: Path) -> None:
    path = suite / "contracts" / "delivery_tools.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document[0]["description"] += " (changed)"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")


def _case(suite: Path) -> None:
    path = suite / "cases" / "cases.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["user"] = first["user"] + "?"
    path.write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n")


def _tool_results(suite: Path) -> None:
    path = suite / "cases" / "results.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["rules"][0]["result"] = {"city": "Казань"}
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")


def _settings(suite: Path) -> None:
    path = suite / "fcreplay.toml"
    path.write_text(path.read_text(encoding="utf-8").replace("max_steps = 4", "max_steps = 3"))


@pytest.mark.parametrize(
    ("change", "replays"),
    [
        (_prompt, ATTEMPTS),
        (_contract, ATTEMPTS),
        (_tool_results, ATTEMPTS),
        (_settings, ATTEMPTS),
        # The first case (`lookup`): auto, forced, no_tools, reversed × 2 targets × 2.
        (_case, 16),
    ],
)
def test_changing_an_input_replays_what_it_changes(
    suite: Path, capsys: pytest.CaptureFixture[str], change: Any, replays: int
) -> None:
    check(suite, capsys)
    change(suite)
    warm = check(suite, capsys)
    cold = check(suite, capsys, "--no-cache")
    again = check(suite, capsys)  # now from the cache, drift and all
    assert replayed(warm[2]) == replays and replayed(again[2]) == 0
    assert (warm[0], masked(warm[1])) == (cold[0], masked(cold[1])) == (again[0], masked(again[1]))
    assert logged(warm[1]) == logged(cold[1]) == logged(again[1])


def test_a_unit_without_a_recording_comes_from_the_cache_too(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (suite / "cassettes" / "hasty" / "reversed" / "lookup.json").unlink()
    cold = check(suite, capsys, "--no-cache")
    warm = check(suite, capsys)
    assert replayed(warm[2]) == 0 and warm[0] == cold[0] == 1
    assert "drift: hasty/reversed/lookup (2 attempts): no cassette" in warm[1]
    assert masked(warm[1]) == masked(cold[1]) and logged(warm[1]) == logged(cold[1])


@pytest.mark.parametrize("processes", [1, 2])
def test_a_cached_check_keeps_only_the_records_it_shows(suite: Path, processes: int) -> None:
    """Each unit's digest is made where it ran (a worker, with several): the parent keeps
    the records of the attempts it prints, not every record of the run."""
    (suite / "cassettes" / "hasty" / "reversed" / "lookup.json").unlink()
    result = run_check(load_suite(suite / "fcreplay.toml"), processes=processes, cache=False)
    assert result.attempts == ATTEMPTS and result.counts()["drift"] == 2
    assert [r.key for r in result.run.records] == [
        ("hasty", "reversed", "lookup", 1),
        ("hasty", "reversed", "lookup", 2),
    ]
    packs = sorted((suite / ".fcreplay" / "cache").glob("*.pack"))
    assert sum(len(read_pack(path).entries) for path in packs) == ATTEMPTS // 2


def test_folding_after_the_replay_prints_what_folding_during_it_does(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (suite / "cassettes" / "hasty" / "reversed" / "lookup.json").unlink()
    during = check(suite, capsys, "--no-cache", "--jobs", "2")
    after = check(suite, capsys, "--no-cache", "--jobs", "1")  # one process folds afterwards
    assert during[0] == after[0] == 1
    assert masked(during[1]) == masked(after[1]) and logged(during[1]) == logged(after[1])


@pytest.mark.parametrize("held", [None, 0])
def test_packs_written_during_the_replay_are_those_written_after_it(
    suite: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    held: int | None,
) -> None:
    if held is not None:  # the lines set aside go to files at once, as at 100k exchanges
        monkeypatch.setattr(packing, "HELD_BYTES", held)
    (suite / "cassettes" / "hasty" / "reversed" / "lookup.json").unlink()
    during = check(suite, capsys, "--no-cache", "--jobs", "2")  # from the workers' lines
    written = _stored(suite)
    check(suite, capsys, "--no-cache", "--jobs", "1")  # from the finished log
    assert _stored(suite) == written
    warm = check(suite, capsys, "--jobs", "2")
    assert replayed(warm[2]) == 0
    assert masked(warm[1]) == masked(during[1]) and logged(warm[1]) == logged(during[1])


def test_lines_set_aside_are_found_where_they_were_put_held_or_in_a_file(
    tmp_path: Path,
) -> None:
    aside = SetAside(tmp_path)
    first, second = b"..line one|line two", b"line three|"
    aside.add(first, 2, len(first))
    aside.add(second, 0, len(second))
    whole = (first[2:] + second).decode()
    for spilled in (False, True):
        if spilled:
            aside.spill()
            aside.flush()
            assert aside.held == 0 and list(tmp_path.iterdir()) == []
        else:
            assert aside.held == len(whole)
            assert isinstance(aside.piece(0, 9), InBlock)  # not copied
        assert aside.read(0, 9) == b"line one|"
        assert aside.read(9, 12) == b"line twoline"  # across two blocks' stretches
        assert aside.read(0, aside.end).decode() == whole
    aside.add(b"four", 0, 4)  # after the spill, straight to the file
    aside.flush()
    assert aside.read(0, aside.end).decode() == whole + "four"
    aside.close()


def test_pieces_that_lie_back_to_back_are_written_as_one(tmp_path: Path) -> None:
    block, other = b"aaaabbbbcccc", b"dddd"
    pieces = [InBlock(block, 0, 4), InBlock(block, 4, 4), InBlock(other, 0, 4)]
    assert after(pieces[0], pieces[1]) == InBlock(block, 0, 8)
    assert after(pieces[1], pieces[2]) is None  # another block
    assert after(InBlock(block, 0, 4), InBlock(block, 8, 4)) is None  # a gap
    with (tmp_path / "f").open("w+b") as handle:
        handle.write(block)
        handle.flush()
        fd = handle.fileno()
        assert after(Aside(fd, 0, 4), Aside(fd, 4, 4)) == Aside(fd, 0, 8)
        assert after(Aside(fd, 0, 4), Aside(fd + 1, 4, 4)) is None
        assert after(Aside(fd, 0, 4), InBlock(block, 4, 4)) is None


def _stored(suite: Path) -> dict[str, Any]:
    """What each pack holds per unit (its lines without run id and timing), and its
    request bodies."""
    found: dict[str, Any] = {}
    for path in sorted((suite / ".fcreplay" / "cache").glob("*.pack")):
        pack = read_pack(path)
        assert pack.entries
        found[path.name] = (
            pack.bodies(),
            {
                label: (
                    e.key,
                    re.sub(rb'"elapsed_ms":\d+', b"", pack.stamped([e], "x" * e.size)[1]),
                    pack.raw(e.digest),
                    pack.raw(e.share),
                )
                for label, e in pack.entries.items()
            },
        )
    return found


def test_a_check_that_replays_every_unit_reads_no_entry_of_the_cache(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cold = check(suite, capsys)
    for path in (suite / ".fcreplay" / "cache").glob("*.pack"):
        data = path.read_bytes()
        header = data.index(b"\n", len(MAGIC)) + 1
        start = header + json.loads(data[len(MAGIC) : header])["index"]
        path.write_bytes(data[:start] + b"\x00garbage" + data[start + 8 :])  # its first line
        assert not read_pack(path).entries and read_bodies(path) is not None
    assert replayed(check(suite, capsys, "--no-cache")[2]) == ATTEMPTS
    warm = check(suite, capsys)
    assert replayed(warm[2]) == 0
    assert masked(warm[1]) == masked(cold[1]) and logged(warm[1]) == logged(cold[1])


def test_a_cassette_behind_a_symlink_is_always_replayed(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = suite / "cassettes" / "careful" / "auto" / "lookup.json"
    kept = suite / "cassettes" / "careful" / "auto" / "lookup.kept"
    cassette.rename(kept)
    cassette.symlink_to(kept.name)
    cold = check(suite, capsys)
    warm = check(suite, capsys)
    assert replayed(warm[2]) == 2
    assert masked(warm[1]) == masked(cold[1])


def test_worker_processes_and_shards_fill_the_same_cache(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    serial = check(suite, capsys, "--no-cache")
    parallel = check(suite, capsys, "--no-cache", "--jobs", "2")
    assert masked(parallel[1]) == masked(serial[1]) and logged(parallel[1]) == logged(serial[1])
    shutil.rmtree(suite / ".fcreplay")
    halves = [check(suite, capsys, "--shard", f"{k}/2", "--jobs", "2") for k in (1, 2)]
    assert sum(replayed(err) for _, _, err in halves) == ATTEMPTS
    whole = check(suite, capsys)
    assert replayed(whole[2]) == 0
    assert masked(whole[1]) == masked(serial[1]) and logged(whole[1]) == logged(serial[1])


def test_a_damaged_cache_is_ignored(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cold = check(suite, capsys)
    cache = suite / ".fcreplay" / "cache"
    for path in [*cache.glob("*.pack"), cache / "tail.json", cache / "stat-index.json"]:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] + b"\x00garbage" + data[len(data) // 2 :])
    damaged = check(suite, capsys)
    assert replayed(damaged[2]) == ATTEMPTS
    assert masked(damaged[1]) == masked(cold[1]) and logged(damaged[1]) == logged(cold[1])
    assert replayed(check(suite, capsys)[2]) == 0  # written afresh


def test_an_entry_of_the_wrong_shape_is_replayed_instead(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A well-formed file (its checksum right) whose entry is not: the unit is replayed."""
    cold = check(suite, capsys)
    path = suite / ".fcreplay" / "cache" / "careful.pack"
    pack = read_pack(path)
    entries = {label: copied(pack, entry) for label, entry in pack.entries.items()}
    entries["careful/auto/lookup"] = replace(
        entries["careful/auto/lookup"], digest=b'{"attempts": "two"}'
    )
    write_pack(path, entries, pack.bodies())
    (suite / ".fcreplay" / "cache" / "tail.json").unlink()  # so that the digest is needed
    warm = check(suite, capsys)
    assert replayed(warm[2]) == 2
    assert masked(warm[1]) == masked(cold[1]) and logged(warm[1]) == logged(cold[1])


def test_deleting_the_cache_is_safe(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cold = check(suite, capsys)
    shutil.rmtree(suite / ".fcreplay")
    again = check(suite, capsys)
    assert replayed(again[2]) == ATTEMPTS
    assert masked(again[1]) == masked(cold[1])


def test_no_cache_replays_everything_and_writes_the_cache(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert replayed(check(suite, capsys, "--no-cache")[2]) == ATTEMPTS
    assert replayed(check(suite, capsys, "--no-cache")[2]) == ATTEMPTS
    assert replayed(check(suite, capsys)[2]) == 0


def test_the_cache_keeps_itself_out_of_git(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check(suite, capsys)
    ignore = (suite / ".fcreplay" / ".gitignore").read_text(encoding="utf-8")
    assert ignore.splitlines()[-1] == "*"


def test_a_cache_folder_set_in_the_config(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = suite / "fcreplay.toml"
    config.write_text('cache = "build/check-cache"\n' + config.read_text(encoding="utf-8"))
    check(suite, capsys)
    assert (suite / "build" / "check-cache" / "careful.pack").is_file()
    assert not (suite / ".fcreplay").exists()
    assert replayed(check(suite, capsys)[2]) == 0


def test_a_credential_in_known_lines_is_refused(tmp_path: Path) -> None:
    """Reused lines are looked through for the run's credential values, as new ones are."""
    line = b'{"run_id":"r","secret":"sk-live-value-123"}\n'
    with RunLogWriter(tmp_path / "a.jsonl") as writer:
        writer.append_known([(("t", "auto", "c", 1), len(line))], line)
    from fcreplay.cassettes.redaction import SecretGuard

    guard = SecretGuard(["sk-live-value-123"])
    with RunLogWriter(tmp_path / "b.jsonl", guard=guard) as writer, pytest.raises(SecretLeakError):
        writer.append_known([(("t", "auto", "c", 1), len(line))], line)
    assert (tmp_path / "b.jsonl").read_bytes() == b""


def test_the_stat_index_hashes_a_file_again_only_when_it_changed(tmp_path: Path) -> None:
    path = tmp_path / "cassette.json"
    path.write_text("one", encoding="utf-8")
    long_ago = 1_000_000_000
    os.utime(path, ns=(long_ago, long_ago))
    index = StatIndex(tmp_path / "index.json")
    first = index.digest(path)
    index.save()
    again = StatIndex(tmp_path / "index.json")
    assert again.digest(path) == first and again.hashed == 0
    path.write_text("two", encoding="utf-8")  # the same size, a new modification time
    assert again.digest(path) != first and again.hashed == 1
    assert StatIndex(tmp_path / "index.json").digest(tmp_path / "gone.json") == "absent"
