"""Credentials never reach disk: headers and query keys scrubbed, leaks refused."""

from __future__ import annotations

import pytest

from fcreplay.cassettes.redaction import leaks, refuse_leaks, scrub_headers, scrub_url
from fcreplay.errors import SecretLeakError


def test_credential_headers_are_dropped() -> None:
    headers = {
        "Authorization": "Bearer sk-x",
        "x-api-key": "k",
        "X-Goog-Api-Key": "k",
        "api-key": "k",
        "Cookie": "c",
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
    }
    assert scrub_headers(headers) == {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
    }


def test_key_query_parameter_is_removed() -> None:
    url = "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key=AIzaSECRET"
    assert scrub_url(url) == "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse"
    assert scrub_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"


@pytest.mark.parametrize(
    "text",
    [
        "token sk-proj-abcdefghijklmnop1234",
        '"x-api-key": "sk-ant-api03-abcdefgh"',
        "AIzaSyA1234567890abcdefghijklmnopqrstu",
    ],
)
def test_key_shaped_strings_are_found(text: str) -> None:
    assert leaks(text, [])


def test_ordinary_text_is_not_a_leak() -> None:
    assert leaks("ask-me task-force sk-short disk-12345", []) == []


def test_the_configured_key_value_is_found_whatever_its_shape() -> None:
    assert leaks("echo: plain-key-value-123", ["plain-key-value-123"])
    with pytest.raises(SecretLeakError, match=r"cassette c\.json would contain"):
        refuse_leaks("… plain-key-value-123 …", ["plain-key-value-123"], where="cassette c.json")


def test_per_call_response_headers_are_dropped_so_rerecordings_diff_cleanly() -> None:
    headers = {
        "Date": "Sun, 29 Nov 2026 23:21:31 GMT",
        "x-request-id": "req_1",
        "x-ratelimit-remaining-tokens": "29000",
        "retry-after": "2",
        "content-type": "text/event-stream",
    }
    assert scrub_headers(headers) == {"retry-after": "2", "content-type": "text/event-stream"}
