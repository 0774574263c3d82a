"""The pytest plugin (registered on install through the `pytest11` entry point).

- fixture `fcreplay` (see `fcreplay.plugin.fixture`) and marker
  `@pytest.mark.fcreplay(cassette=..., contract=...)`: a relative cassette path is
  taken from the test file's folder, a relative contract path from the rootdir;
  the default cassette is `<test folder>/cassettes/<module>/<test>.json`;
- `--fcreplay-record-mode=none|once|new_episodes|all` (default `none`: nothing is
  recorded, no socket is opened, and a request without a recording fails the test
  with the nearest recorded request and the differences);
- `--fcreplay-update`: write golden entries (`golden/pytest/<module>.json`) instead
  of failing on missing or changed ones; unused entries are removed;
- ini options `fcreplay_golden` (default `golden`) and `fcreplay_runs` (default
  `runs`), relative to the rootdir;
- vcrpy knows the "fcreplay" serializer: pytest-recording's VCR always, and
  vcrpy's default one (`vcr.use_cassette`) when the test modules import vcrpy.

A session whose tests never ask for the fixture writes nothing. This module
imports only pytest; the rest loads when a test first uses the fixture.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fcreplay.plugin.fixture import Fcreplay
    from fcreplay.plugin.naming import TestName
    from fcreplay.plugin.session import PluginSession

_SESSION = pytest.StashKey["PluginSession"]()
_USED = pytest.StashKey["Fcreplay"]()
_RUN_ID = pytest.StashKey[str]()
_SEEN = pytest.StashKey["dict[str, set[tuple[str, str]]]"]()
"""`ran` and `known` test names, kept for every session without loading fcreplay."""
_SUMMARY = pytest.StashKey["list[str]"]()
_NAME = pytest.StashKey["TestName"]()
_MODES = ("none", "once", "new_episodes", "all")
_PACKAGE = __name__.partition(".")[0]


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    _keep_modules_plain(pluginmanager)
    group = parser.getgroup("fcreplay", "fcreplay: replay LLM traffic and check tool calls")
    group.addoption(
        "--fcreplay-record-mode",
        choices=_MODES,
        default="none",
        help="none (default): replay only; once: record cassettes that do not exist; "
        "new_episodes: record requests without a recording; all: record everything again.",
    )
    group.addoption(
        "--fcreplay-update",
        action="store_true",
        help="Write golden entries of assert_golden instead of failing, remove unused ones.",
    )
    parser.addini("fcreplay_golden", "Folder of golden files (fcreplay).", default="golden")
    parser.addini("fcreplay_runs", "Folder of run logs (fcreplay).", default="runs")


def _keep_modules_plain(pluginmanager: pytest.PytestPluginManager) -> None:
    """Leave fcreplay's own modules to Python's import system.

    pytest rewrites the asserts of every package of a plugin's distribution, here all
    of fcreplay, though its modules hold no test assertions (its checks raise
    AssertionError with their own messages). Rewriting costs an AST parse and a compile
    of each module imported, every session whenever the result cannot be cached
    (PYTHONDONTWRITEBYTECODE, as CI images often set, or a read-only site-packages):
    a quarter of a second or more. Registered at plugin load (this hook runs then),
    before any fcreplay module but this one is imported.
    """
    hook = getattr(pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and _PACKAGE in marked:
        marked.discard(_PACKAGE)
        cache = getattr(hook, "_marked_for_rewrite_cache", None)
        if isinstance(cache, dict):
            cache.clear()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fcreplay(cassette=None, contract=None): the test's cassette and canonical contract",
    )


def _session(config: pytest.Config) -> PluginSession:
    found = config.stash.get(_SESSION, None)
    if found is None:
        from fcreplay.plugin.session import PluginSession

        workerinput: dict[str, Any] = getattr(config, "workerinput", {})
        root = config.rootpath
        found = PluginSession(
            runs=root / str(config.getini("fcreplay_runs")),
            golden=root / str(config.getini("fcreplay_golden")),
            run_id=workerinput.get("fcreplay_run_id") or _run_id(config),
            update=bool(config.getoption("fcreplay_update")),
            worker=str(workerinput.get("workerid", "main")),
        )
        config.stash[_SESSION] = found
    return found


def _run_id(config: pytest.Config) -> str:
    found = config.stash.get(_RUN_ID, None)
    if found is None:
        from fcreplay.runlog import new_run_id

        found = new_run_id("pytest")
        config.stash[_RUN_ID] = found
    return found


def _seen(config: pytest.Config) -> dict[str, set[tuple[str, str]]]:
    found = config.stash.get(_SEEN, None)
    if found is None:
        found = {"ran": set(), "known": set()}
        config.stash[_SEEN] = found
    return found


def _name(item: pytest.Item) -> TestName:
    found = item.stash.get(_NAME, None)
    if found is None:
        from fcreplay.plugin.naming import test_name

        cls = getattr(item, "cls", None)
        found = test_name(item.nodeid, item.path, cls.__name__ if cls else None, item.name)
        item.stash[_NAME] = found
    return found


@pytest.fixture
def fcreplay(request: pytest.FixtureRequest) -> Iterator[Fcreplay]:
    """Clients whose traffic replays from (or records into) the test's cassette, and
    assertions on decisions, tools sent, tool-loop history and golden decisions."""
    from fcreplay.plugin.fixture import Fcreplay
    from fcreplay.traffic.cassette import traffic_meta
    from fcreplay.traffic.player import TrafficPlayer, parse_record_mode

    session = _session(request.config)
    test = _name(request.node)
    try:
        session.claim(test)
    except ValueError as exc:
        pytest.fail(str(exc), pytrace=False)
    marker = request.node.get_closest_marker("fcreplay")
    options: dict[str, Any] = dict(marker.kwargs) if marker else {}
    contract = options.get("contract")
    if isinstance(contract, str | Path) and not Path(contract).is_absolute():
        contract = request.config.rootpath / contract
    mode = parse_record_mode(str(request.config.getoption("fcreplay_record_mode")))
    path = test.cassette(options.get("cassette"))
    player = TrafficPlayer(path, traffic_meta(test.target, test.name), mode, keep_texts=True)
    handle = Fcreplay(player, test, run_id=session.run_id, contract=contract, golden=session)
    request.node.stash[_USED] = handle
    started = time.monotonic()
    yield handle
    try:
        if player.save():
            session.cassettes_written += 1
        session.append(handle.records(round((time.monotonic() - started) * 1000)))
    finally:
        # The item lives as long as the session: holding the handle would keep every
        # test's cassette in memory, for the garbage collector to walk again and again.
        del request.node.stash[_USED]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when == "call" and report.passed:
        test = _name(item)
        _seen(item.config)["ran"].add((test.target, test.name))
    handle = item.stash.get(_USED, None)
    if handle is None or call.when != "call" or not handle.player.misses:
        return report
    # A request without a recording fails the test even when the code caught the error.
    text = handle.miss_report()
    report.outcome = "failed"
    # When the miss is what broke the test, the client library's traceback adds nothing.
    if report.longrepr is None or _raised_by_miss(call):
        report.longrepr = text
    else:
        report.longrepr = f"{report.longrepr}\n\n{text}"
    return report


def _raised_by_miss(call: pytest.CallInfo[None]) -> bool:
    from fcreplay.clients.bridge import NoRecordedAnswer

    error: BaseException | None = call.excinfo.value if call.excinfo else None
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, NoRecordedAnswer):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def pytest_collection_finish(session: pytest.Session) -> None:
    if "vcr" in sys.modules:
        # The test modules use vcrpy: let `vcr.use_cassette(path, serializer="fcreplay")`
        # read fcreplay cassettes (vcrpy is never imported for a session that does not).
        from fcreplay.cassettes.store import register_vcr_serializer

        register_vcr_serializer()
    # Known names let the golden summary tell a deleted test from a deselected one.
    known = _seen(session.config)["known"]
    for item in session.items:
        test = _name(item)
        known.add((test.target, test.name))


def pytest_deselected(items: list[pytest.Item]) -> None:
    for item in items:
        test = _name(item)
        _seen(item.config)["known"].add((test.target, test.name))


@pytest.hookimpl(optionalhook=True)
def pytest_recording_configure(config: pytest.Config, vcr: Any) -> None:
    """pytest-recording's VCR knows the "fcreplay" serializer (`vcr_config`)."""
    from fcreplay.cassettes.store import register_vcr_serializer

    register_vcr_serializer(vcr)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    node.workerinput["fcreplay_run_id"] = _run_id(node.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    data = getattr(node, "workeroutput", {}).get("fcreplay")
    if data is None:
        return
    seen = _seen(node.config)
    for key in ("ran", "known"):
        seen[key] |= {(target, name) for target, name in data[key]}
    if data["session"] is not None:
        _session(node.config).merge(data["session"])


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash.get(_SESSION, None)
    seen = _seen(config)
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        if state is not None:
            state.close()
        workeroutput["fcreplay"] = {
            "ran": sorted(seen["ran"]),
            "known": sorted(seen["known"]),
            "session": None if state is None else state.export(),
        }
        return
    if state is not None:
        state.ran |= seen["ran"]
        state.known |= seen["known"]
        config.stash[_SUMMARY] = state.finish()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    for line in config.stash.get(_SUMMARY, []):
        terminalreporter.write_line(line)
