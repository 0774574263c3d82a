"""`fcreplay simulate`: serve the bundled loopback provider simulator until Ctrl-C."""

from __future__ import annotations

import click

from fcreplay.commands.options import config_option

DEFAULT_PORT = 8765


@click.command("simulate")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; keep the loopback unless you know why not.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to listen on; 0 picks a free one (the printed URL shows which).",
)
@click.option(
    "--script",
    "script_path",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    help="Simulator script (JSON). Default: simulator_script of the suite configuration.",
)
@click.option(
    "--latency",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Seconds added to every response (requests still run concurrently).",
)
@config_option
def command(
    host: str, port: int, script_path: str | None, latency: float, config_path: str | None
) -> bool:
    """Serve scripted answers in the four provider wire formats on a local port.

    A synthetic test and demo tool: its answers come from a script, never from
    a model, and say nothing about real models. Point a target's base_url at
    the printed address. Stops cleanly on Ctrl-C.
    """
    from fcreplay.simulator.server import base_urls, load_script, make_server

    script = load_script(script_path or _configured_script(config_path))
    try:
        server = make_server(script, host=host, port=port, latency=latency)
    except OSError as exc:
        raise click.UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} "
            "(choose another --port, or 0 for a free one)"
        ) from None
    urls = base_urls(server.url)
    shown = ", ".join(f"{name} {url}" for name, url in urls.items())
    click.echo(
        f"fcreplay simulator (synthetic test/demo tool, not a real model) listening on "
        f"{server.url} with {len(script.cases)} scripted cases; base_url: {shown}; "
        "Ctrl-C stops it",
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return True


def _configured_script(config_path: str | None) -> str:
    from fcreplay.errors import InputError, Problem
    from fcreplay.inputs.config import load_config

    try:
        config = load_config(config_path)
    except InputError as exc:
        hint = Problem("simulate", None, "no --script given: pass --script FILE")
        raise InputError([*exc.problems, hint]) from None
    if config.simulator_script is None:
        raise InputError.at(
            config.source,
            None,
            "no simulator_script in the configuration: pass --script FILE "
            '(or set simulator_script = "cases/....json")',
        )
    return str(config.simulator_script)
