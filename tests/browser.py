"""A headless Chromium driven through the Chrome DevTools protocol, for page tests.

The browser is Debian's ``chromium`` (the Makefile installs it with ``apt-get``); no
driver, no browser download. It is started with ``--remote-debugging-pipe`` and the
protocol's JSON messages (each ended by a NUL byte) go through two pipes it reads as
descriptor 3 and writes as descriptor 4, so nothing but the standard library is needed.
Every network request the page makes is recorded (:attr:`Browser.requests`), as are
script errors (:attr:`Browser.errors`).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

#: Names of Debian's and other distributions' Chromium binaries, in the order tried.
BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The path of a Chromium binary on PATH (``$BRITTLE_CHROMIUM`` first), or None."""
    chosen = os.environ.get("BRITTLE_CHROMIUM")
    if chosen:
        return chosen if Path(chosen).exists() else None
    for name in BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    """The browser did not answer, or answered a command with an error."""


class Browser:
    """One headless Chromium with one page.

    Args:
        binary: the Chromium executable.
        width, height: the window size in CSS pixels.
        timeout: seconds to wait for any one answer.
    """

    def __init__(self, binary: str, *, width: int = 1400, height: int = 1000, timeout: float = 30):
        self.timeout = timeout
        self.requests: list[str] = []
        self.errors: list[str] = []
        self._events: list[dict[str, Any]] = []
        self._next_id = 0
        self._buffer = b""
        self._profile = tempfile.mkdtemp(prefix="brittle-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def descriptors() -> None:  # in the child: the protocol's descriptors 3 and 4
            # Moved above 10 first: a pipe end may itself be descriptor 3 or 4.
            read_end = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            write_end = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self._process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=descriptors,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._session: str | None = None
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self._session = self.send(
            "Target.attachToTarget", targetId=page["targetId"], flatten=True, session=False
        )["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable")
        self.resize(width, height)

    def resize(self, width: int, height: int) -> None:
        """Set the viewport to ``width`` x ``height`` CSS pixels."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    # ------------------------------------------------------------ protocol
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed its protocol pipe (it exited)")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def _record(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(str(text))
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(" ".join(str(a.get("value")) for a in params.get("args", [])))
        self._events.append(message)

    def send(self, method: str, *, session: bool = True, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events met meanwhile are recorded)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session and self._session is not None:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self._record(answer)

    def wait_for_event(self, method: str) -> dict[str, Any]:
        """Wait for (and return) the next event ``method`` not yet consumed."""
        deadline = time.monotonic() + self.timeout
        while True:
            for k, event in enumerate(self._events):
                if event.get("method") == method:
                    del self._events[: k + 1]
                    return event
            self._record(self._read_message(deadline))

    # ------------------------------------------------------------ page
    def open(self, path: Path, *, ready: str = "document.body.dataset.ready === 'true'") -> float:
        """Load a file and wait until ``ready`` is true; returns the seconds it took."""
        self._events.clear()
        start = time.monotonic()
        self.send("Page.navigate", url=path.resolve().as_uri())
        self.wait_for_event("Page.loadEventFired")
        self.wait_until(ready)
        return time.monotonic() - start

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited if a promise)."""
        result = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"{expression!r} raised {text}")
        return result["result"].get("value")

    def wait_until(self, expression: str) -> None:
        """Poll ``expression`` until it is true."""
        deadline = time.monotonic() + self.timeout
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                raise BrowserError(f"{expression!r} did not become true")
            time.sleep(0.05)

    def screenshot(self, path: Path, *, full_page: bool = False) -> Path:
        """Save a PNG of the viewport (or of the whole page) to ``path``."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": size["height"],
                "scale": 1,
            }
        data = self.send("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        """Stop the browser and remove its profile."""
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close", session=False)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
