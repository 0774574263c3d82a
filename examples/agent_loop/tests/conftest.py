"""Clients of the application under test, built on fcreplay's replaying HTTP client.

AGENT_LOOP_BASE_URL points them at the server to record from (the bundled
simulator); in replay the URL is never reached, nothing leaves the process.
"""

from __future__ import annotations

import os
from typing import Any

import anthropic
import openai
import pytest

BASE_URL = os.environ.get("AGENT_LOOP_BASE_URL", "http://127.0.0.1:8765")
FAKE_KEY = "not-a-real-key"
"""The SDKs want a key; this one is never sent anywhere real and never recorded."""


@pytest.fixture
def anthropic_client(fcreplay: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=BASE_URL, api_key=FAKE_KEY, http_client=fcreplay.httpx_client(), max_retries=0
    )


@pytest.fixture
def openai_client(fcreplay: Any) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{BASE_URL}/v1",
        api_key=FAKE_KEY,
        http_client=fcreplay.httpx_client(),
        max_retries=0,
    )
