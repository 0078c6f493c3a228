"""The `serve` door: one episode's native HTTP API on 127.0.0.1, for envs that declare one.

The env supplies only the request handling (its `http_api` hook, see core/http_api.py); this
module is the server: a stdlib ThreadingHTTPServer, a cap on request bodies, and the one
live episode every request is handled on (its own thread, one request at a time). A response
that asks for a stall is delayed here, outside the episode's thread, so a slow request never
blocks the others. Standard library only.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.core.http_api import HttpHandler, HttpRequest, HttpResponse
from datagauntlet.frontdoors.live import LiveEpisode

MAX_BODY_BYTES = 32 * 1024 * 1024


def http_handler_of(env: Environment[Any]) -> HttpHandler:
    handler: HttpHandler | None = env.http_api()
    if handler is None:
        raise ValueError(
            f"{env.id} has no native HTTP API; serve its tools with `datagauntlet mcp {env.id}`"
        )
    return handler


class EpisodeHttpServer(ThreadingHTTPServer):
    """Serves one live episode; `close()` stops serving and closes the episode."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self, live: LiveEpisode, handler: HttpHandler, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.live = live
        self.handler = handler
        self._thread: threading.Thread | None = None
        super().__init__((host, port), _Handler)

    @classmethod
    def open(
        cls, env: Environment[Any], task: Task, host: str = "127.0.0.1", port: int = 0
    ) -> EpisodeHttpServer:
        handler = http_handler_of(env)
        live = LiveEpisode.open_sync(env, task)
        try:
            return cls(live, handler, host, port)
        except BaseException:
            live.close_sync()
            raise

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def handle_request_of(self, request: HttpRequest) -> HttpResponse:
        if self.live.closed:
            return HttpResponse(503, {"error": "the episode is closed"})
        try:
            return self.live.run_sync(lambda ep: self.handler(ep, request))
        except RuntimeError:  # closed while this request waited
            return HttpResponse(503, {"error": "the episode is closed"})

    def start(self) -> EpisodeHttpServer:
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving (if started), release the socket, then close the episode."""
        try:
            if self._thread is not None:
                self.shutdown()
                self._thread.join(timeout=10)
            self.server_close()
        finally:
            self.live.close_sync()

    def __enter__(self) -> EpisodeHttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Handler(BaseHTTPRequestHandler):
    server: EpisodeHttpServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet by default
        pass

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes; with Nagle on, the body waits ~40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _send(self, response: HttpResponse) -> None:
        if response.delay > 0:
            time.sleep(response.delay)
        data = json.dumps(response.body).encode()
        self.send_response(response.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _serve(self, method: str) -> None:
        url = urlparse(self.path)
        body = b""
        if method != "GET":
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > MAX_BODY_BYTES:
                self.close_connection = True
                self._send(HttpResponse(413, {"error": f"a body of 0..{MAX_BODY_BYTES} bytes"}))
                return
            body = self.rfile.read(length)
        query = parse_qs(url.query, keep_blank_values=True)
        self._send(self.server.handle_request_of(HttpRequest(method, url.path, query, body)))

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")
