"""Connections to each worker of a server of several: which worker a new connection lands on
is the kernel's choice, so tests open connections until every worker holds one."""

from __future__ import annotations

import http.client
import json
from typing import Any

from server_helpers import Server


class Pinned:
    """One kept-alive HTTP connection, and the worker that took it."""

    def __init__(self, server: Server) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        self.worker = self.request("GET", "/health")[1]["worker"]

    def request(
        self, method: str, path: str, body: Any = None, raw: bytes | None = None, **headers: str
    ) -> tuple[int, Any]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        sent = {"Content-Type": "application/json"} if data is not None else {}
        self.conn.request(method, path, body=data, headers={**sent, **headers})
        resp = self.conn.getresponse()
        text = resp.read()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, text.decode(errors="replace")

    def close(self) -> None:
        self.conn.close()


def pinned(server: Server, workers: int) -> dict[int, Pinned]:
    """A connection to each worker (new connections land where the kernel's hash puts them)."""
    found: dict[int, Pinned] = {}
    for _ in range(400):
        c = Pinned(server)
        if c.worker in found:
            c.close()
        else:
            found[c.worker] = c
        if len(found) == workers:
            return found
    raise AssertionError(f"connections reached only workers {sorted(found)}")
