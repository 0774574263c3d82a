"""`fcreplay simulate`: serve the bundled loopback provider simulator until Ctrl-C."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from fcreplay.commands.options import config_option

if TYPE_CHECKING:
    from fcreplay.simulator.script import Script

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
    "--from-cases",
    is_flag=True,
    help="Answer every case of the suite from its own expectations and tool results "
    "(a script, when configured or given, still wins case by case).",
)
@click.option(
    "--profile",
    default="expected",
    show_default=True,
    metavar="NAME",
    help="With --from-cases: the profile for model ids that name none (expected, sloppy, "
    "numbers-as-strings, extra-property, wrong-tool, eager-call, false-success).",
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
    host: str,
    port: int,
    script_path: str | None,
    from_cases: bool,
    profile: str,
    latency: float,
    config_path: str | None,
) -> bool:
    """Serve scripted answers in every served provider wire format on a local port.

    A synthetic test and demo tool: its answers come from a script or, with
    --from-cases, from the suite's cases (model fcreplay-sim-<profile> picks a
    profile), never from a model, and say nothing about real models. Point a
    target's base_url at the printed address. Stops cleanly on Ctrl-C.

    Script schema, profiles and faults: docs/simulator.md.
    """
    from fcreplay.simulator.server import base_urls, load_script, make_server

    if from_cases:
        script = _from_cases(config_path, script_path, profile)
    else:
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


def _from_cases(config_path: str | None, script_path: str | None, profile: str) -> Script:
    from fcreplay.inputs.suite import load_suite
    from fcreplay.simulator.from_cases import PROFILES, script_from_cases
    from fcreplay.simulator.reader import load_script

    if profile not in PROFILES:
        raise click.BadParameter(
            f"{profile!r} (known: {', '.join(PROFILES)})", param_hint="--profile"
        )
    suite = load_suite(config_path)
    chosen = script_path or suite.config.simulator_script
    return script_from_cases(suite, load_script(chosen) if chosen else None, default=profile)


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
            "no simulator_script in the configuration: pass --script FILE, "
            '--from-cases, or set simulator_script = "cases/....json"',
        )
    return str(config.simulator_script)
