"""A target's request options applied to every request its adapter builds.

`extra_body` is deep-merged into the body (so it is recorded, hashed and part of
request drift), `query` is appended to the path (drift too: replay compares
paths), plain `headers` join the request's headers (recorded, after the usual
scrubbing). Headers whose value comes from the environment are secrets: the
transport adds them like the API key, so they never reach a cassette.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

from fcreplay.errors import InputError
from fcreplay.inputs.config import Target
from fcreplay.inputs.target_options import deep_merge
from fcreplay.neutral import WireRequest


def with_target_options(request: WireRequest, target: Target) -> WireRequest:
    """`request` with the target's extra body, query and plain headers."""
    if not (target.extra_body or target.query or target.headers):
        return request
    path = request.path
    if target.query:
        path += ("&" if "?" in path else "?") + urlencode(target.query)
    headers = dict(request.headers)
    headers.update((h.name, h.value) for h in target.headers if h.value is not None)
    body = deep_merge(request.body, target.extra_body) if target.extra_body else request.body
    return replace(request, path=path, headers=headers, body=body)


def secret_headers(target: Target, source: Path | str) -> dict[str, str]:
    """The target's headers whose values come from the environment, read now.

    Raises InputError, naming `source` (the configuration file), for a variable
    that is not set.
    """
    found: dict[str, str] = {}
    for header in target.headers:
        if header.env is None:
            continue
        value = os.environ.get(header.env)
        if not value:
            raise InputError.at(
                source,
                None,
                f"target {target.name!r}: header {header.name} reads the environment "
                f"variable {header.env}, which is not set; export it before recording",
            )
        found[header.name] = value
    return found
