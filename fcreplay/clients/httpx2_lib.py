"""httpx2 enters fcreplay here: the library, for the bridge (`clients.bridge`) to build on.

httpx2 is httpx's successor by the same author with the same API; the current
official SDKs (openai 3.x, anthropic 2.x) are built on it and refuse an httpx client.
"""

from __future__ import annotations

import httpx2

from fcreplay.clients.bridge import ClientLibrary

LIBRARY = ClientLibrary(httpx2, "httpx2")
