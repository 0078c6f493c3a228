"""The partner API over real HTTP, on 127.0.0.1, for one episode.

    GET  /records[?cursor=C]   a page; 429 with no Retry-After once the quota is spent;
                                a timeout is a real stall, then 504
    POST /submit               {"records": [...]}: accepted once
    GET  /score                the episode's score (reward 0 until a submission)

Every request goes through `Episode.call`, so the HTTP API and the in-process tools share one
world, one action log and one grader. The stall happens outside the lock: a slow request never
blocks the others.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from datagauntlet.envs.dirty_integration.episode import DirtyIntegrationEpisode

MAX_BODY_BYTES = 32 * 1024 * 1024


class EpisodeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, episode: DirtyIntegrationEpisode, port: int = 0, stall: float = 2.0) -> None:
        self.episode = episode
        self.stall = stall
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread

    def call(self, name: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(HTTP status, body) of one tool call; 409 once the episode is over."""
        with self.lock:
            was_over = self.episode.done
            result = self.episode.call(name, args)
        return (409 if was_over else _status_of(result)), result


class _Handler(BaseHTTPRequestHandler):
    server: EpisodeServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet by default
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path == "/records":
            query = parse_qs(url.query, keep_blank_values=True)
            cursors = query.get("cursor", [])
            if len(cursors) > 1:
                self._send(400, {"error": "give cursor at most once"})
                return
            status, result = self.server.call(
                "fetch_page", {"cursor": cursors[0] if cursors else None}
            )
            if status == 504:
                time.sleep(self.server.stall)  # a real stall: the client waits, then gets nothing
            self._send(status, result)
        elif url.path == "/score":
            with self.server.lock:
                self._send(200, self.server.episode.score().as_dict())
        else:
            self._send(
                404, {"error": f"no such endpoint {url.path!r}; see GET /records, POST /submit"}
            )

    def do_POST(self) -> None:
        if urlparse(self.path).path != "/submit":
            self._send(404, {"error": "no such endpoint; POST /submit"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._send(413, {"error": f"body larger than {MAX_BODY_BYTES} bytes"})
            self.close_connection = True
            return
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"null")
        except ValueError as exc:
            self._send(400, {"error": f"body is not valid JSON: {exc}"})
            return
        args = body if isinstance(body, dict) else {"records": body}
        self._send(*self.server.call("submit_records", args))


def _status_of(result: dict[str, Any]) -> int:
    if "error" not in result:
        return 200
    status = result.get("status")
    return status if isinstance(status, int) else 400
