"""Recording formats other than vcrpy's, turned into vcrpy-shaped interactions.

One reader interface for every format: `interaction_items(document)` returns the
interactions of a loaded document as vcrpy-layout dicts (`request` with `method`,
`uri`, `headers`, `body`; `response` with `status`, `headers`, `body`), which
`cassettes.interactions` then decodes whatever the format (string, base64, gzip,
parsed bodies). A new cassette format is one more branch here.

- vcrpy YAML/JSON: `interactions` (or, before vcrpy 1.0, a bare list);
- Ruby VCR: `http_interactions`, the same request/response layout (body
  `{encoding, string}` or `{base64_string}`, capitalised header names);
- HAR 1.2 (Polly.JS, browser and mitmproxy exports): `log.entries`, headers as
  name/value lists, bodies in `postData.text` and `content.text` (`encoding:
  "base64"` for binary).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FORMATS = "vcrpy 'interactions', Ruby VCR 'http_interactions' or HAR 1.2 'log.entries'"
"""What a cassette file must hold, as error messages name it."""


def interaction_items(document: Any) -> list[Any] | None:
    """The interactions of a cassette document in vcrpy's layout, or None if it is none."""
    if isinstance(document, list):
        return document  # vcrpy < 1.0 wrote a bare list of interactions
    if not isinstance(document, dict):
        return None
    for key in ("interactions", "http_interactions"):
        if isinstance(document.get(key), list):
            items: list[Any] = document[key]
            return items
    log = document.get("log")
    if isinstance(log, dict) and isinstance(log.get("entries"), list):
        return [_har_entry(entry) for entry in log["entries"]]
    return None


def _har_entry(entry: Any) -> Any:
    """A HAR entry as a vcrpy interaction; a malformed one stays as it is (read as unreadable)."""
    if not isinstance(entry, dict):
        return entry
    request, response = entry.get("request"), entry.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        return entry
    return {
        "request": {
            "method": request.get("method", ""),
            "uri": request.get("url", ""),
            "headers": _har_headers(request.get("headers")),
            "body": _har_body(request.get("postData")),
        },
        "response": {
            "status": {"code": response.get("status"), "message": response.get("statusText", "")},
            "headers": _har_headers(response.get("headers")),
            "body": _har_body(response.get("content")),
        },
    }


def _har_headers(value: Any) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for item in value if isinstance(value, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            headers.setdefault(item["name"], []).append(str(item.get("value", "")))
    return headers


def _har_body(content: Any) -> Any:
    if not isinstance(content, Mapping) or not isinstance(content.get("text"), str):
        return None
    if str(content.get("encoding", "")).lower() == "base64":
        return {"base64_string": content["text"]}
    return {"string": content["text"]}
