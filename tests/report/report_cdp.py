"""A minimal Chrome DevTools Protocol driver for headless Chromium (Debian's package).

Just enough to load a page, wait for it, click at an element's centre like a user, read the
DOM and record every network request the page made.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, executable: str, timeout: float = 30.0) -> None:
        from websockets.sync.client import connect

        self._profile = tempfile.mkdtemp(prefix="dg-chromium-")
        self.proc = subprocess.Popen(
            [executable, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--remote-debugging-port=0",
             "--remote-debugging-address=127.0.0.1", f"--user-data-dir={self._profile}",
             "--window-size=1400,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        port = self._devtools_port(timeout)
        deadline = time.monotonic() + timeout
        page = None
        while page is None and time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                targets = json.load(r)
            page = next((t for t in targets if t.get("type") == "page"), None)
            if page is None:
                time.sleep(0.1)
        if page is None:
            self.close()
            raise RuntimeError("chromium opened no page")
        self._stack = contextlib.ExitStack()
        self.ws = self._stack.enter_context(
            connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=timeout)
        )
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def _devtools_port(self, timeout: float) -> int:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                break
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if m:
                return int(m.group(1))
        self.close()
        raise RuntimeError("chromium did not announce its DevTools port")

    def send(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)
        raise TimeoutError(method)

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str, ready: str, timeout: float = 30.0) -> float:
        """Load `url` afresh and wait until `ready` holds; returns the seconds it took."""
        self.send("Page.navigate", url="about:blank")
        self.wait_for("location.href === 'about:blank'")
        start = time.monotonic()
        self.send("Page.navigate", url=url)
        self.wait_for(f"location.href === {json.dumps(url)} && ({ready})", timeout)
        return time.monotonic() - start

    def wait_for(self, expression: str, timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        guarded = f"(() => {{ try {{ return {expression}; }} catch (e) {{ return false; }} }})()"
        while time.monotonic() < deadline:
            value = self.evaluate(guarded)
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"waited {timeout}s for {expression}")

    def click(self, selector: str) -> None:
        """A real mouse click at the element's centre (scrolled into view first)."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
            "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
            "return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1],
                      button="left", clickCount=1)  # fmt: skip

    def requested_urls(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def screenshot(self, path: Path) -> None:
        import base64

        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        path.write_bytes(base64.b64decode(data["data"]))

    def close(self) -> None:
        stack = getattr(self, "_stack", None)
        if stack is not None:
            stack.close()
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        shutil.rmtree(self._profile, ignore_errors=True)
