"""A real session server (uvicorn, 127.0.0.1, port 0) in a child process, and a client that
lets any built-in policy play through it."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from typing import Any
from urllib.parse import urlparse

CLI = [sys.executable, "-m", "datagauntlet.cli.main", "server", "--port", "0"]


class Server:
    def __init__(self, *options: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*CLI, *options],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        if not m:
            self.stop()
            raise RuntimeError(f"server did not start: {line}")
        self.url = m.group(1)
        self.port = urlparse(self.url).port or 0
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if self.request("GET", "/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server never answered /health")

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
            sent = {"Content-Type": "application/json"} if data is not None else {}
            conn.request(method, path, body=data, headers={**sent, **(headers or {})})
            resp = conn.getresponse()
            text = resp.read()
            try:
                return resp.status, json.loads(text)
            except ValueError:
                return resp.status, text.decode(errors="replace")
        finally:
            conn.close()

    def stop(self) -> str:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        return self.proc.stderr.read() if self.proc.stderr else ""


class RemoteEpisode:
    """The agent-visible surface of an episode held by the server: what a policy needs."""

    def __init__(self, server: Server, env: str, task: int = 0, **config: Any) -> None:
        self.server = server
        status, opening = server.request(
            "POST", "/sessions", {"env": env, "task": task, "config": config}
        )
        assert status == 201, opening
        self.id = opening["session_id"]
        self.system_prompt = opening["system_prompt"]
        self.prompt = opening["prompt"]
        self.tool_specs = opening["tools"]
        self.done = False
        self.score: dict[str, Any] | None = None

    def call(self, name: str, args: Any = None) -> dict[str, Any]:
        status, reply = self.server.request(
            "POST", f"/sessions/{self.id}/call", {"name": name, "arguments": args or {}}
        )
        assert status == 200, reply
        self.done = reply["done"]
        if "score" in reply:
            self.score = reply["score"]
        return reply["result"]
