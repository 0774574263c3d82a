"""Headless Chromium driven over its DevTools pipe, with nothing but the standard library.

`--remote-debugging-pipe` makes Chromium read DevTools commands from fd 3 and write
answers to fd 4, NUL-separated JSON; no port is opened and no package is needed.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--remote-debugging-pipe",
)


def available() -> bool:
    """Whether a Chromium binary is installed."""
    return Path(CHROMIUM).exists()


class Page:
    """One tab, spoken to through the browser's pipe."""

    def __init__(self, process: subprocess.Popen[bytes], commands: int, answers: int) -> None:
        self._process = process
        self._out = commands
        self._in = answers
        self._buffer = b""
        self._next = 0
        self._session: str | None = None

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result (events are skipped)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if self._session is not None:
            message["sessionId"] = self._session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._in, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed its DevTools pipe")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result

    def attach(self, width: int, height: int) -> None:
        """Open a tab of the given window size and talk to it from now on."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        """Poll an expression until it is truthy (a condition, not a fixed wait)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.02)
        raise AssertionError(f"never true: {expression}")

    def open(self, url: str) -> None:
        """Load a page and wait until it has loaded."""
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'")

    def click(self, selector: str) -> None:
        """Click the middle of the first element matching `selector`, as a mouse would."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).scrollIntoView()")
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def close(self) -> None:
        """Ask the browser (not the tab) to quit."""
        self._session = None
        self.call("Browser.close")

    def screenshot(self, path: Path) -> None:
        """Save what the window shows as a PNG."""
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))


@contextmanager
def chromium(profile: Path, width: int = 1280, height: int = 900) -> Iterator[Page]:
    """A headless Chromium with a fresh profile and one tab of the given size."""
    commands_read, commands_write = os.pipe()
    answers_read, answers_write = os.pipe()

    def wire_fds() -> None:
        # Chromium wants the pipe at fds 3 and 4; dup2 also makes them inheritable.
        read, write = os.dup(commands_read), os.dup(answers_write)
        os.dup2(read, 3)
        os.dup2(write, 4)

    process = subprocess.Popen(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        preexec_fn=wire_fds,
        close_fds=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(commands_read)
    os.close(answers_write)
    page = Page(process, commands_write, answers_read)
    try:
        page.attach(width, height)
        yield page
    finally:
        try:
            page.close()
        except (RuntimeError, OSError):
            process.kill()
        process.wait(timeout=30)
        os.close(commands_write)
        os.close(answers_read)
