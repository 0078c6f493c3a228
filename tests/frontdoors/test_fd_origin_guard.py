"""`serve`, `mock-model`, the MCP door over HTTP and the verifiers tool server refuse what a
foreign web page can send, on every route, and serve their own clients as before. (The
session server's routes: tests/server/test_server_origin_guard.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from guard_probe import BODY_TYPES, assert_refused, foreign_headers, http

import datagauntlet as dg
from datagauntlet.frontdoors.mock_model import MockModelServer
from datagauntlet.frontdoors.serve import EpisodeHttpServer

CHAT = {"model": "default", "messages": [{"role": "user", "content": "hi"}]}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "0"}}}  # fmt: skip
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}
Door = tuple[int, list[tuple[str, str, Any]], Callable[[], Any]]


@pytest.fixture(scope="module")
def serve_door() -> Iterator[Door]:
    env = dg.make("dirty-integration", profile="clean")
    with EpisodeHttpServer.open(env, env.tasks("eval", 1)[0]) as s:
        routes = [("GET", "/records", None), ("POST", "/submit", {"records": []}),
                  ("GET", "/score", None)]  # fmt: skip
        yield int(s.server_address[1]), routes, lambda: s.live.run_sync(lambda ep: ep.calls)


@pytest.fixture(scope="module")
def mock_door() -> Iterator[Door]:
    with MockModelServer(dg.make("dirty-integration")) as s:
        routes = [("POST", "/v1/chat/completions", CHAT), ("GET", "/v1/models", None),
                  ("GET", "/health", None)]  # fmt: skip
        yield s.port, routes, lambda: s.requests


@contextmanager
def mcp_http(*extra: str) -> Iterator[int]:
    cli = [sys.executable, "-m", "datagauntlet.cli.main", "mcp", "dataclean"]
    proc = subprocess.Popen([*cli, "--transport", "http", "--port", "0", *extra],
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stderr is not None
        url = proc.stderr.readline().rsplit(" at ", 1)[1].strip()
        yield int(url.split(":")[2].split("/")[0])
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def mcp_door() -> Iterator[Door]:
    with mcp_http() as port:
        routes = [("POST", "/mcp", INIT), ("GET", "/mcp", None), ("DELETE", "/mcp", None)]
        yield port, routes, lambda: None


@pytest.fixture(scope="module")
def tools_door() -> Iterator[Door]:
    pytest.importorskip("mcp")
    from datagauntlet.frontdoors.vf.tool_server import ToolServer
    from datagauntlet.frontdoors.vf.worlds import WorldRegistry

    registry = WorldRegistry()
    server = ToolServer(registry)
    try:
        port = int(server.base.rsplit(":", 1)[1])
        yield port, [("POST", "/w/" + "k" * 20 + "/mcp", INIT)], lambda: len(registry)
    finally:
        server.stop()


DOORS = ["serve_door", "mock_door", "mcp_door", "tools_door"]


def _send(port: int, method: str, path: str, body: Any, headers: dict[str, str]) -> Any:
    data = None if body is None else json.dumps(body).encode()
    return http(port, method, path, headers, data)


@pytest.mark.parametrize("door", DOORS)
def test_every_route_refuses_a_foreign_host_or_origin(door: str, request) -> None:
    port, routes, state = request.getfixturevalue(door)
    before = state()
    for bad in foreign_headers(port).values():
        for method, path, body in routes:
            headers = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json",
                       **MCP_ACCEPT, **bad}  # fmt: skip
            status, reply = _send(port, method, path, body, headers)
            assert_refused(status, reply, 403, bad.get("Origin") or bad["Host"])
    assert state() == before


@pytest.mark.parametrize("door", DOORS)
def test_every_post_refuses_a_body_that_is_not_json(door: str, request) -> None:
    port, routes, state = request.getfixturevalue(door)
    before = state()
    for ctype in BODY_TYPES.values():
        for method, path, body in routes:
            if method != "POST":
                continue
            headers = {"Host": f"127.0.0.1:{port}", **MCP_ACCEPT}
            if ctype is not None:
                headers["Content-Type"] = ctype
            status, reply = _send(port, method, path, body, headers)
            assert_refused(status, reply, 415, "Content-Type")
    assert state() == before


@pytest.mark.parametrize("door", DOORS)
def test_the_doors_own_clients_are_served(door: str, request) -> None:
    port, routes, _ = request.getfixturevalue(door)
    method, path, body = routes[0]
    own = {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
    for headers in ({"Host": f"127.0.0.1:{port}"}, own):
        headers = {**headers, "Content-Type": "application/json", **MCP_ACCEPT}
        status, reply = _send(port, method, path, body, headers)
        assert status < 400 or (status == 404 and door == "tools_door"), reply


def test_the_operator_can_add_a_host_and_an_origin() -> None:
    with mcp_http(
        "--allow-host", "lab.internal", "--allow-origin", "http://localhost:3000"
    ) as port:
        ok = {"Content-Type": "application/json", **MCP_ACCEPT}
        for extra in ({"Host": f"lab.internal:{port}", "Origin": "http://lab.internal"},
                      {"Origin": "http://localhost:3000"}):  # fmt: skip
            status, reply = _send(port, "POST", "/mcp", INIT, {**ok, **extra})
            assert status == 200, reply
        status, reply = _send(port, "POST", "/mcp", INIT, {**ok, "Origin": "http://localhost:3001"})
        assert_refused(status, reply, 403, "localhost:3001")
