"""httpx enters fcreplay here: the library, for the bridge (`clients.bridge`) to build on."""

from __future__ import annotations

import httpx

from fcreplay.clients.bridge import ClientLibrary

LIBRARY = ClientLibrary(httpx, "httpx")
