"""Keeping credentials out of every file and terminal line: scrubbing, and the one guard.

Scrubbing removes what is known to be a credential (auth headers, `key=` query
values, a URL's user-info) from what is recorded. The guard is the last check
before any text leaves fcreplay, whichever command or writer produces it: a run
log line, a cassette, a golden file, a report, a line on the terminal. Each writer
calls `SecretGuard.check` (or `refuse_leaks`) on the exact text it is about to write.
"""

from __future__ import annotations

import re
import threading
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
KEY_SHAPES: dict[str, str] = {
    "Anthropic": r"sk-ant-[A-Za-z0-9_-]{8,}",
    "OpenAI": r"sk-[A-Za-z0-9_-]{16,}",
    "Google": r"AIza[0-9A-Za-z_-]{30,}",
    "Groq": r"gsk_[A-Za-z0-9]{20,}",
    "xAI": r"xai-[A-Za-z0-9]{20,}",
    "AWS access key": r"(?:AKIA|ASIA)[A-Z0-9]{16}",
    "GitHub token": r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})",
    "JWT": r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
}
"""Credential shapes refused wherever they appear, whoever's key they are."""
KEY_SHAPED = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(KEY_SHAPES.values()) + ")")
KEY_PREFIXES: dict[str, tuple[str, ...]] = {
    "Anthropic": ("sk-ant-",),
    "OpenAI": ("sk-",),
    "Google": ("AIza",),
    "Groq": ("gsk_",),
    "xAI": ("xai-",),
    "AWS access key": ("AKIA", "ASIA"),
    "GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "JWT": ("eyJ",),
}
"""How each shape begins. Text holding none of these cannot match, and searching for
them (`may_hold_key`) is many times cheaper than the pattern: every run log line is
checked."""
_GITHUB_OR_GROQ = re.compile(r"g(?:h[pousr]_|ithub_pat_|sk_)")
"""The beginnings starting with `g`, in one search (`g` is common, so the search stops
often, but each stop is one character's test)."""


VOLATILE_HEADERS = frozenset(
    {"date", "request-id", "x-request-id", "cf-ray", "openai-processing-ms", "age", "via"}
)
VOLATILE_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "x-envoy-")
"""Response headers that change on every call: kept, they would make every
re-recording a noisy diff for the reviewer."""


def scrub_headers(headers: Mapping[str, str], secret: Iterable[str] = ()) -> dict[str, str]:
    """Drop credential, cookie and per-call headers, and those named in `secret` (the
    suite's `secret_headers`); names come back lower-case."""
    kept = {}
    extra = {name.lower() for name in secret}
    for name, value in headers.items():
        lower = name.lower()
        if (
            lower in SECRET_HEADERS
            or lower in extra
            or lower in VOLATILE_HEADERS
            or lower.startswith(VOLATILE_PREFIXES)
        ):
            continue
        kept[lower] = value
    return kept


def scrub_url(url: str) -> str:
    """Remove a URL's user-info (`user:password@`) and credential query parameters
    (Gemini's `?key=`)."""
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
    found = [
        "the value of a credential in use"
        for value in secrets
        if len(value) >= _SHORTEST and value in text
    ]
    if may_hold_key(text):
        found += [f"a key-shaped string {_mask(m.group())!r}" for m in KEY_SHAPED.finditer(text)]
    return found


def may_hold_key(text: str) -> bool:
    """Whether `text` holds the beginning of a key shape; without one `leaks` finds none.

    No beginning has JSON punctuation in it, so a text cut into pieces where one side of
    every cut is punctuation holds one exactly when one of its pieces does.
    """
    # Substring tests, each a fast scan of the text; a rare character first (`-`, `A`,
    # `J`: a single one is a memchr) spares the longer tests most texts. Kept equal to
    # `KEY_PREFIXES` by a test.
    return (
        ("-" in text and ("sk-" in text or "xai-" in text))
        or ("A" in text and ("AIza" in text or "AKIA" in text or "ASIA" in text))
        or ("J" in text and "eyJ" in text)
        or _GITHUB_OR_GROQ.search(text) is not None
    )


def refuse_leaks(text: str, secrets: Iterable[str], *, where: str) -> None:
    """Raise SecretLeakError, naming `where`, if `text` holds any credential."""
    found = leaks(text, secrets)
    if found:
        raise SecretLeakError(
            f"{where} would contain {found[0]}; nothing was written. Remove the credential "
            "from the prompt, cases, tool results, base_url or recorded response, then run "
            "again."
        )


class SecretGuard:
    """The credential values of a run, and the check every writer makes before writing.

    Thread-safe: recording learns values (a secret header's) while other threads check.
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()
        for value in values:
            self.add(value)

    def add(self, value: str) -> None:
        """Refuse this value from now on (too short a value would match by accident)."""
        if len(value) >= _SHORTEST:
            with self._lock:
                self._values.add(value)

    @property
    def values(self) -> tuple[str, ...]:
        """The values refused besides the key shapes."""
        with self._lock:
            return tuple(sorted(self._values))

    def check(self, text: str, *, where: str) -> None:
        """Raise SecretLeakError naming `where` if `text` holds a credential."""
        refuse_leaks(text, self.values, where=where)


_SHORTEST = 8


def url_secrets(url: str | None) -> list[str]:
    """The credentials a URL carries: its user-info password and its key parameters."""
    if not url:
        return []
    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query) if k.lower() in SECRET_QUERY_KEYS and v]
    return found


def _mask(value: str) -> str:
    return value[:6] + "…" + value[-2:]
