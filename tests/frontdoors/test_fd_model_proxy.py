"""The model client honours the environment's proxies on the lean transport, as httpx does on
its own (httpx reads HTTP_PROXY & co. only for a client it builds the transport of)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from datagauntlet.frontdoors.models import OpenAIModel, TransientError, preflight

COMPLETION = {
    "id": "x", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "via the proxy"}}],
}  # fmt: skip


class _Proxy(BaseHTTPRequestHandler):
    """A forward proxy that answers itself: it records each request's absolute-form target."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[str]] = []

    def log_message(self, *args: object) -> None:
        return

    def _answer(self, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append(f"POST {self.path}")
        self._answer(COMPLETION)

    def do_GET(self) -> None:
        self.seen.append(f"GET {self.path}")
        self._answer({"object": "list", "data": [{"id": "m", "object": "model"}]})


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{httpd.server_address[1]}")
    _Proxy.seen = []
    try:
        yield _Proxy.seen
    finally:
        httpd.shutdown()
        httpd.server_close()


async def _one_call(base_url: str) -> str:
    model = OpenAIModel("m", base_url, retries=0)
    try:
        reply = await model.complete([{"role": "user", "content": "hi"}], [])
    finally:
        await model.close()
    return str(reply.message["content"])


def test_requests_go_through_the_environments_proxy(proxy: list[str]) -> None:
    # the host does not resolve: only the proxy can answer for it
    assert asyncio.run(_one_call("http://models.invalid/v1")) == "via the proxy"
    assert proxy == ["POST http://models.invalid/v1/chat/completions"]
    assert asyncio.run(preflight("http://models.invalid/v1", "m", "DG_NO_KEY")) is None
    assert proxy[-1] == "GET http://models.invalid/v1/models"


def test_no_proxy_hosts_go_direct(proxy: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "models.invalid")
    with pytest.raises(TransientError, match="APIConnectionError"):
        asyncio.run(_one_call("http://models.invalid/v1"))
    assert proxy == []
