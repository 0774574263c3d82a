"""`fcreplay record`: run the suite live and write cassettes and a run log."""

from __future__ import annotations

import click

from fcreplay.commands.options import config_option
from fcreplay.commands.running import error_lines, selection_options, summarize


@click.command("record")
@config_option
@selection_options
@click.option(
    "--record-mode",
    type=click.Choice(["all", "once", "new_episodes"]),
    default="all",
    show_default=True,
    help="all: record every attempt afresh; once: only units with no cassette yet; "
    "new_episodes: replay what still matches and record the rest.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (units, requests it would send live, cassettes it would replace) "
    "and stop; nothing is sent or written.",
)
@click.option(
    "--resume",
    metavar="RUN_ID",
    help="Continue an interrupted run: skip attempts already in runs/RUN_ID.jsonl.",
)
def command(
    config_path: str | None,
    targets: tuple[str, ...],
    case_ids: tuple[str, ...],
    variants: tuple[str, ...],
    concurrency: int,
    record_mode: str,
    dry_run: bool,
    resume: str | None,
) -> bool:
    """Run the suite against the live providers and record it.

    Writes one cassette per target/variant/case under the cassettes folder
    (credentials removed; a cassette that would still hold one is refused) and
    one run log line per attempt, each as soon as it ends. Keys come only from
    the environment variables named by `api_key_env`.

    Targets, keys and settings: docs/config.md.
    """
    from fcreplay.commands.output import echo, suite_guard
    from fcreplay.engine.runner import RecordOptions, record
    from fcreplay.inputs.suite import load_suite

    suite = load_suite(config_path)
    guard = suite_guard(suite.config)
    options = RecordOptions(
        targets=targets,
        variants=variants,
        case_ids=case_ids,
        record_mode=record_mode,  # type: ignore[arg-type]
        concurrency=concurrency,
        resume=resume,
    )
    if dry_run:
        from fcreplay.engine.dryrun import plan_recording

        for line in plan_recording(suite, options).lines():
            echo(guard, line)
        return True
    result = record(suite, options)
    echo(guard, f"recorded run {result.run_id}")
    for line in summarize(result):
        echo(guard, line)
    failed = error_lines(result)
    if failed:
        echo(
            guard,
            f"fix the cause, then send the failed attempts again with "
            f"`fcreplay record --resume {result.run_id}`",
        )
    for line in failed:
        echo(guard, line)
    return not failed
