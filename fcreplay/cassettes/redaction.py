"""Keeping credentials out of cassettes, logs and reports: scrubbing and refusal."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from fcreplay.errors import SecretLeakError

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
    }
)
SECRET_QUERY_KEYS = frozenset({"key", "api_key", "apikey", "access_token"})
KEY_SHAPED = re.compile(
    r"(?<![A-Za-z0-9])(?:sk-ant-[A-Za-z0-9_-]{8,}|sk-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,})"
)
"""OpenAI (sk-...), Anthropic (sk-ant-...) and Google (AIza...) key shapes."""


VOLATILE_HEADERS = frozenset(
    {"date", "request-id", "x-request-id", "cf-ray", "openai-processing-ms", "age", "via"}
)
VOLATILE_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "x-envoy-")
"""Response headers that change on every call: kept, they would make every
re-recording a noisy diff for the reviewer."""


def scrub_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Drop credential, cookie and per-call headers; names come back lower-case."""
    kept = {}
    for name, value in headers.items():
        lower = name.lower()
        if (
            lower in SECRET_HEADERS
            or lower in VOLATILE_HEADERS
            or lower.startswith(VOLATILE_PREFIXES)
        ):
            continue
        kept[lower] = value
    return kept


def scrub_url(url: str) -> str:
    """Remove credential query parameters (Gemini's `?key=`) and user-info from a URL."""
    parts = urlsplit(url)
    if "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rpartition("@")[2])
        url = urlunsplit(parts)
    if not parts.query:
        return url
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in SECRET_QUERY_KEYS
    ]
    return urlunsplit(parts._replace(query=urlencode(query)))


def leaks(text: str, secrets: Iterable[str]) -> list[str]:
    """Describe every credential found in `text`: a known key value or a key-shaped string."""
    # Very short values would match by accident; real keys are far longer.
    found = ["the API key's value" for value in secrets if len(value) >= 8 and value in text]
    found += [f"a key-shaped string {_mask(m.group())!r}" for m in KEY_SHAPED.finditer(text)]
    return found


def refuse_leaks(text: str, secrets: Iterable[str], *, where: str) -> None:
    """Raise SecretLeakError, naming `where`, if `text` holds any credential."""
    found = leaks(text, secrets)
    if found:
        raise SecretLeakError(
            f"{where} would contain {found[0]}; nothing was written. Remove the credential "
            "from the prompt, cases or provider response, then record again."
        )


def _mask(value: str) -> str:
    return value[:6] + "…" + value[-2:]
