"""The `serve` door: one episode's native HTTP API on 127.0.0.1, for envs that declare one.

The env supplies only the request handling (its `http_api` hook, see core/http_api.py); this
module is the server: http_json's mechanics (JSON for every method and path, a checked
Content-Length, a cap on bodies answered with a 413 that names it, socket timeouts, a real
backlog), and the one live episode every request is handled on (its own thread, one request
at a time). Every method goes to the env's handler, which answers 404/405 naming its routes.
A response that asks for a stall is delayed here, outside the episode's thread, so a slow
request never blocks the others. Standard library only.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs, urlparse

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.core.http_api import HttpHandler, HttpRequest, HttpResponse
from datagauntlet.frontdoors.http_json import JsonHandler, JsonHTTPServer
from datagauntlet.frontdoors.live import LiveEpisode

MAX_BODY_BYTES = 32 * 1024 * 1024


def http_handler_of(env: Environment[Any]) -> HttpHandler:
    handler: HttpHandler | None = env.http_api()
    if handler is None:
        raise ValueError(
            f"{env.id} has no native HTTP API; serve its tools with `datagauntlet mcp {env.id}`"
        )
    return handler


class EpisodeHttpServer(JsonHTTPServer):
    """Serves one live episode; `close()` stops serving and closes the episode."""

    def __init__(
        self,
        live: LiveEpisode,
        handler: HttpHandler,
        host: str = "127.0.0.1",
        port: int = 0,
        socket_timeout: float = 30.0,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
    ) -> None:
        self.live = live
        self.handler = handler
        self._thread: threading.Thread | None = None
        super().__init__((host, port), _Handler, socket_timeout, allow_hosts, allow_origins)

    @classmethod
    def open(
        cls,
        env: Environment[Any],
        task: Task,
        host: str = "127.0.0.1",
        port: int = 0,
        socket_timeout: float = 30.0,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
    ) -> EpisodeHttpServer:
        handler = http_handler_of(env)
        live = LiveEpisode.open_sync(env, task)
        try:
            return cls(live, handler, host, port, socket_timeout, allow_hosts, allow_origins)
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


class _Handler(JsonHandler):
    server: EpisodeHttpServer
    MAX_BODY_BYTES = MAX_BODY_BYTES

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes; with Nagle on, the body waits ~40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _send(self, response: HttpResponse) -> None:
        if response.delay > 0:
            time.sleep(response.delay)
        self.send_json(response.status, response.body, dict(response.headers))

    def _serve(self) -> None:
        url = urlparse(self.path)
        has_body = "Content-Length" in self.headers or "Transfer-Encoding" in self.headers
        body = self.read_body() if has_body else b""
        query = parse_qs(url.query, keep_blank_values=True)
        request = HttpRequest(self.command, url.path, query, body)
        self._send(self.server.handle_request_of(request))

    def __getattr__(self, name: str) -> Callable[[], None]:
        # every method (DELETE, PATCH, ... BREW) goes to the env's handler, which knows its
        # routes and answers 404/405 naming them
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)
