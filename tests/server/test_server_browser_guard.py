"""A real browser (headless Chromium) on a page from another local server tries every way a
page has to drive the session server: simple `fetch`es a browser sends without asking (text,
no type, no-cors, a beacon), a JSON `fetch` (preflighted), WebSockets to each WebSocket route.
No session is opened, stepped or closed. Skips where no Chromium exists (CI installs one)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from server_helpers import Server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from report_cdp import Browser, find_browser

ATTACK = """<!doctype html><body><script>
const door = "http://127.0.0.1:%(port)d", wsDoor = "ws://127.0.0.1:%(port)d";
const sid = "%(sid)s", results = [];
const open = JSON.stringify({env: "dataclean"});
const call = JSON.stringify({name: "list_files", arguments: {}});
const tries = [
  ["text", "/sessions", {method: "POST", body: open, headers: {"Content-Type": "text/plain"}}],
  ["no type", "/sessions", {method: "POST", body: new Blob([open])}],
  ["no-cors", "/sessions", {method: "POST", body: open, mode: "no-cors"}],
  ["json", "/sessions", {method: "POST", body: open,
                         headers: {"Content-Type": "application/json"}}],
  ["call", `/sessions/${sid}/call`, {method: "POST", body: call, mode: "no-cors"}],
  ["answer", `/sessions/${sid}/answer`, {method: "POST", body: '{"text": "x"}',
                                          mode: "no-cors"}],
  ["delete", `/sessions/${sid}`, {method: "DELETE", mode: "no-cors"}],
  ["reset", "/openenv/dataclean/reset", {method: "POST", body: '{"task": 1}', mode: "no-cors"}],
];
const fetches = tries.map(([name, path, init]) => fetch(door + path, init).then(
  r => results.push([name, r.type === "opaque" ? "opaque" : r.status]),
  e => results.push([name, "blocked"])));
navigator.sendBeacon(door + "/sessions", open);
function ws(path, messages) {
  return new Promise(done => {
    const s = new WebSocket(wsDoor + path);
    s.onopen = () => { results.push([path, "open"]); messages.forEach(m => s.send(m)); };
    s.onmessage = e => results.push([path, e.data]);
    s.onerror = () => { results.push([path, "refused"]); done(); };
    s.onclose = () => done();
    setTimeout(done, 3000);
  });
}
const sockets = [ws("/ws", ['{"op": "open", "env": "dataclean"}']),
                 ws(`/sessions/${sid}/ws`, [call, '{"op": "close"}']),
                 ws("/openenv/dataclean/ws", ['{"type": "reset", "data": {}}'])];
Promise.all([...fetches, ...sockets]).then(() => {
  window.__results = results; document.body.dataset.ready = "1"; });
</script></body>"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    exe = find_browser()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Chromium (.ci/run does: apt-get install chromium)")
        pytest.skip("no Chromium on this machine: apt-get install chromium to run browser tests")
    b = Browser(exe)
    b.send("Page.enable")
    yield b
    b.close()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.stop()


class _Page(BaseHTTPRequestHandler):
    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *args: object) -> None:
        return


def test_a_page_on_another_port_cannot_drive_the_server(browser: Browser, server: Server) -> None:
    status, opening = server.request("POST", "/sessions", {"env": "dataclean"})
    assert status == 201
    sid = opening["session_id"]
    before = server.request("GET", "/health")[1]["created"]
    handler = type(
        "Page", (_Page,), {"page": (ATTACK % {"port": server.port, "sid": sid}).encode()}
    )
    site = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        browser.open(f"http://127.0.0.1:{site.server_address[1]}/", "document.body.dataset.ready")
        results = browser.evaluate("window.__results")
    finally:
        site.shutdown()
        site.server_close()
    assert len(results) >= 11, results  # every attempt settled
    for name, outcome in results:
        assert outcome in ("opaque", "blocked", "refused", 403, 415), (name, outcome)
    after = server.request("GET", "/health")[1]
    assert after["created"] == before and after["sessions"] == 1
    status, described = server.request("GET", f"/sessions/{sid}")
    assert status == 200 and described["calls"] == 0 and not described["done"]
    server.request("DELETE", f"/sessions/{sid}")
