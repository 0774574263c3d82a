"""`fcreplay proxy`: a loopback record/replay server for clients in any language."""

from __future__ import annotations

from pathlib import Path

import click

from fcreplay.traffic.player import DEFAULT_RECORD_MODE, RECORD_MODES


@click.command("proxy")
@click.option(
    "--cassette",
    "cassette",
    type=click.Path(dir_okay=False, path_type=Path),
    help="One cassette file for every request.",
)
@click.option(
    "--cassette-dir",
    "cassette_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="A folder of cassettes, one per test: the client names its cassette with the header "
    "`x-fcreplay-cassette: NAME` or the path prefix /c/NAME/ (file DIR/NAME.json).",
)
@click.option(
    "--record-mode",
    type=click.Choice(RECORD_MODES),
    default=DEFAULT_RECORD_MODE,
    show_default=True,
    help="As in the pytest plugin. none: replay only; once: record a cassette that does not "
    "exist yet; new_episodes: record requests without a match; all: record everything again.",
)
@click.option(
    "--upstream",
    "upstreams",
    multiple=True,
    metavar="URL|ADAPTER=URL",
    help="Where to forward requests to record: the provider's origin "
    "(https://api.openai.com), for every path or for the paths of one adapter "
    "(anthropic=https://api.anthropic.com). Repeatable.",
)
@click.option(
    "--route",
    "routes",
    multiple=True,
    metavar="/PREFIX=URL[,ADAPTER]",
    help="Forward paths under /PREFIX to URL with the prefix removed, read as ADAPTER "
    "(default: from the path). Repeatable; the longest prefix wins.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; keep the loopback unless you know why not.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port to listen on; 0 picks a free one (printed, and written to --port-file).",
)
@click.option(
    "--port-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the port to this file once listening.",
)
@click.option(
    "--ready-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the base URL to this file once listening; removed when the proxy stops.",
)
@click.option(
    "--runs",
    "runs",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs"),
    show_default=True,
    help="Folder of the run log (one record per model exchange, for report and golden).",
)
@click.option(
    "--target",
    default="proxy",
    show_default=True,
    help="Name the cassettes and the run log give this traffic (golden/<target>.json).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=600.0,
    show_default=True,
    help="Seconds to wait for an upstream answer.",
)
@click.option(
    "--contract",
    "contract",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Check each call in the run log against this contract (default: against the tools "
    "its request declared).",
)
@click.option("--quiet", is_flag=True, help="Do not print a line per exchange.")
def command(
    cassette: Path | None,
    cassette_dir: Path | None,
    record_mode: str,
    upstreams: tuple[str, ...],
    routes: tuple[str, ...],
    host: str,
    port: int,
    port_file: Path | None,
    ready_file: Path | None,
    runs: Path,
    target: str,
    timeout: float,
    contract: Path | None,
    quiet: bool,
) -> bool:
    """Record and replay provider traffic on a loopback port, for any client.

    Point the client's base URL at the printed address (OpenAI: .../v1; Anthropic
    and Gemini: the address itself). Keys come from the client's own headers: they
    are forwarded upstream and never written. A request without a recorded answer
    (in none mode, or once with an existing cassette) gets a provider-shaped 400
    naming the nearest recorded request and where it differs. Streams pass through
    event by event. Stops cleanly on SIGINT or SIGTERM; exit 1 when a cassette was
    refused because it would have held a credential.
    """
    from fcreplay.proxy.app import ProxyOptions, run_proxy

    if (cassette is None) == (cassette_dir is None):
        raise click.UsageError("give one of --cassette FILE and --cassette-dir DIR")
    options = ProxyOptions(
        cassette=cassette,
        cassette_dir=cassette_dir,
        record_mode=record_mode,
        upstreams=upstreams,
        routes=routes,
        host=host,
        port=port,
        port_file=port_file,
        ready_file=ready_file,
        runs=runs,
        target=target,
        timeout=timeout,
        contract=contract,
    )
    return run_proxy(options, click.echo, quiet=quiet)
