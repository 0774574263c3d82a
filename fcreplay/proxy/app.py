"""The proxy put together from its options: routes, cassette choice, journal, server and its run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fcreplay.engine.transport import Forwarder
from fcreplay.errors import FcreplayError, InputError, Problem
from fcreplay.inputs.contract import load_contract
from fcreplay.proxy.journal import ProxyJournal
from fcreplay.proxy.lifecycle import bind, run_until_stopped, serving
from fcreplay.proxy.routes import parse_routes
from fcreplay.proxy.selection import Selector
from fcreplay.proxy.service import ProxyService, ProxySettings
from fcreplay.runlog import RunLogWriter, new_run_id, run_log_path
from fcreplay.traffic.player import DEFAULT_RECORD_MODE, RECORD_MODES

Echo = Callable[[str], None]


@dataclass(frozen=True)
class ProxyOptions:
    """Everything `fcreplay proxy` is told."""

    cassette: Path | None = None
    cassette_dir: Path | None = None
    record_mode: str = DEFAULT_RECORD_MODE
    upstreams: tuple[str, ...] = ()
    routes: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    port: int = 0
    port_file: Path | None = None
    ready_file: Path | None = None
    runs: Path | None = Path("runs")
    """Folder of the run log; None writes none."""
    target: str = "proxy"
    timeout: float = 600.0
    contract: Path | None = None
    """Calls in the run log are checked against it; default: the tools each request declared."""


def settings_of(options: ProxyOptions) -> ProxySettings:
    """Check the options; InputError says what is wrong with one."""
    if options.record_mode not in RECORD_MODES:
        raise InputError.at("--record-mode", None, f"expected one of {', '.join(RECORD_MODES)}")
    try:
        table = parse_routes(options.upstreams, options.routes)
        selector = Selector(single=options.cassette, folder=options.cassette_dir)
    except ValueError as exc:
        raise InputError(Problem("fcreplay proxy", None, str(exc))) from None
    if options.cassette_dir is not None and options.cassette_dir.is_file():
        raise InputError.at(options.cassette_dir, None, "--cassette-dir is a file, not a folder")
    return ProxySettings(selector, table, options.record_mode, options.target)


@dataclass(frozen=True)
class RunningProxy:
    """A proxy serving in the background: where it listens and what it has seen."""

    url: str
    service: ProxyService
    journal: ProxyJournal


@contextmanager
def running_proxy(options: ProxyOptions, echo: Echo | None = None) -> Iterator[RunningProxy]:
    """Run the proxy in a background thread for the block (an embedding, or a test)."""
    with _assembled(options, echo, freeze=False) as (service, journal):
        server = bind(service.handle, options.host, options.port)
        with serving(server) as url:
            yield RunningProxy(url, service, journal)


@contextmanager
def _assembled(
    options: ProxyOptions, echo: Echo | None, *, freeze: bool
) -> Iterator[tuple[ProxyService, ProxyJournal]]:
    settings = settings_of(options)
    run_id = new_run_id("proxy")
    contract = None if options.contract is None else load_contract(options.contract)
    # Replaying is cheap to run again: its log is flushed per exchange but not synced
    # (a sync per exchange, under the journal's lock, would cap the proxy's throughput).
    durable = settings.mode != "none"
    writer = (
        None
        if options.runs is None
        else RunLogWriter(run_log_path(options.runs, run_id), durable=durable)
    )
    journal = ProxyJournal(run_id, settings.target, echo, writer, contract)
    forwarder = None if settings.routes.empty else Forwarder(timeout=options.timeout)
    service = ProxyService(settings, forwarder, journal, freeze=freeze)
    try:
        yield service, journal
    finally:
        service.close()
        journal.close()
        if forwarder is not None:
            forwarder.close()


def run_proxy(options: ProxyOptions, say: Echo, *, quiet: bool = False) -> bool:
    """Serve until SIGINT/SIGTERM; False when an exchange was refused (a credential).

    `say` prints the listening line, the closing summary and refusals; the line per
    exchange too unless `quiet`.
    """
    # The process is the proxy's own: its collector may be tuned for it.
    with _assembled(options, None if quiet else say, freeze=True) as (service, journal):
        try:
            server = bind(service.handle, options.host, options.port)
        except OSError as exc:
            raise FcreplayError(
                f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc} "
                "(choose another --port, or 0 for a free one)"
            ) from None
        where = options.cassette or options.cassette_dir

        def ready(url: str) -> None:
            # Said even when quiet: scripts wait for this line.
            say(
                f"fcreplay proxy listening on {url} (record mode {options.record_mode}, "
                f"cassettes {where}); SIGINT or SIGTERM stops it"
            )

        stopped_by = run_until_stopped(
            server, port_file=options.port_file, ready_file=options.ready_file, on_ready=ready
        )
        say(f"fcreplay proxy stopped ({stopped_by}): {journal.summary()}")
        refused = service.refused + journal.refused
        for refusal in refused:
            say(f"refused: {refusal}")
    return not refused
