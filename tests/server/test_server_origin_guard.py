"""The session server refuses what a foreign web page can send, on every route, WebSocket
included, and nothing it refuses opens, steps or closes a session."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from server_helpers import Server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontdoors"))
from guard_probe import (
    BODY_TYPES,
    assert_refused,
    foreign_headers,
    http,
    ws_handshake,
)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "0"}}}  # fmt: skip
# every HTTP route, with a body that would change state if it were served
ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/health", None),
    ("GET", "/envs", None),
    ("POST", "/sessions", {"env": "dataclean"}),
    ("GET", "/sessions", None),
    ("GET", "/sessions/{sid}", None),
    ("POST", "/sessions/{sid}/call", {"name": "list_files", "arguments": {}}),
    ("POST", "/sessions/{sid}/answer", {"text": "x"}),
    ("GET", "/sessions/{sid}/score", None),
    ("POST", "/sessions/{sid}/mcp", INIT),
    ("GET", "/sessions/{sid}/mcp", None),
    ("DELETE", "/sessions/{sid}/mcp", None),
    ("DELETE", "/sessions/{sid}", None),
    ("GET", "/openenv/dataclean/health", None),
    ("GET", "/openenv/dataclean/metadata", None),
    ("GET", "/openenv/dataclean/schema", None),
    ("GET", "/openenv/dataclean/state?episode_id={sid}", None),
    ("POST", "/openenv/dataclean/reset", {"task": 1}),
    ("POST", "/openenv/dataclean/step", {"episode_id": "{sid}", "action": {"text": "x"}}),
]
WS_ROUTES = ["/ws", "/sessions/{sid}/ws", "/openenv/dataclean/ws"]
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def sid(server: Server) -> str:
    status, opening = server.request("POST", "/sessions", {"env": "dataclean"})
    assert status == 201
    return str(opening["session_id"])


def _state(server: Server, sid: str) -> tuple[int, int, bool]:
    """(sessions made, calls on the probe session, whether it is done)."""
    made = server.request("GET", "/health")[1]["created"]
    status, described = server.request("GET", f"/sessions/{sid}")
    assert status == 200, described  # still open
    return made, described["calls"], described["done"]


def _body(route_body: Any, sid: str) -> bytes | None:
    return None if route_body is None else json.dumps(route_body).replace("{sid}", sid).encode()


def _shown(headers: dict[str, str]) -> str:
    return headers.get("Origin") or headers["Host"]


@pytest.mark.parametrize("attack", list(foreign_headers(1)))
def test_every_http_route_refuses_a_foreign_host_or_origin(server, sid, attack: str) -> None:
    before = _state(server, sid)
    bad = foreign_headers(server.port)[attack]
    for method, path, body in ROUTES:
        headers = {"Host": f"127.0.0.1:{server.port}", "Content-Type": "application/json"}
        headers.update({**MCP_ACCEPT, **bad})
        status, reply = http(server.port, method, path.replace("{sid}", sid), headers,
                             _body(body, sid))  # fmt: skip
        assert_refused(status, reply, 403, _shown(bad))
    assert _state(server, sid) == before


@pytest.mark.parametrize("kind", list(BODY_TYPES))
def test_every_post_refuses_a_body_that_is_not_json(server, sid, kind: str) -> None:
    before = _state(server, sid)
    for method, path, body in ROUTES:
        if method != "POST":
            continue
        headers = {"Host": f"127.0.0.1:{server.port}", **MCP_ACCEPT}
        if BODY_TYPES[kind] is not None:
            headers["Content-Type"] = str(BODY_TYPES[kind])
        status, reply = http(server.port, method, path.replace("{sid}", sid), headers,
                             _body(body, sid))  # fmt: skip
        assert_refused(status, reply, 415, "Content-Type")
    assert _state(server, sid) == before


@pytest.mark.parametrize("attack", list(foreign_headers(1)))
def test_every_websocket_route_refuses_the_handshake(server, sid, attack: str) -> None:
    before = _state(server, sid)
    bad = foreign_headers(server.port)[attack]
    for path in WS_ROUTES:
        status, body = ws_handshake(server.port, path.replace("{sid}", sid), bad)
        assert_refused(status, body, 403, _shown(bad))
    assert _state(server, sid) == before


def test_the_servers_own_and_allowed_origins_are_served(server, sid) -> None:
    for origin in (f"http://127.0.0.1:{server.port}", f"http://localhost:{server.port}"):
        headers = {"Host": f"localhost:{server.port}", "Origin": origin,
                   "Content-Type": "application/json; charset=utf-8"}  # fmt: skip
        status, opening = http(server.port, "POST", "/sessions", headers,
                               b'{"env": "dataclean"}')  # fmt: skip
        assert status == 201, opening
        assert server.request("DELETE", f"/sessions/{opening['session_id']}")[0] == 200
        assert ws_handshake(server.port, f"/sessions/{sid}/ws", {"Origin": origin})[0] == 101
    # a client that is not a browser sends no Origin, and a Host without a port
    assert http(server.port, "GET", "/health", {"Host": "127.0.0.1"})[0] == 200


def test_allow_host_and_origin_add_a_name_and_keep_the_rest_out() -> None:
    s = Server("--allow-host", "lab.internal", "--allow-origin", "http://localhost:3000")
    try:
        assert s.request("GET", "/health", headers={"Host": "lab.internal:9"})[0] == 200
        headers = {"Host": "lab.internal", "Origin": "http://lab.internal:8080"}
        assert s.request("GET", "/envs", headers=headers)[0] == 200
        assert s.request("POST", "/sessions", {"env": "dataclean"},
                         headers={"Origin": "http://localhost:3000"})[0] == 201  # fmt: skip
        status, reply = s.request("GET", "/envs", headers={"Origin": "http://localhost:3001"})
        assert_refused(status, reply, 403, "localhost:3001")
        status, reply = s.request("GET", "/health", headers={"Host": "evil.example"})
        assert_refused(status, reply, 403, "evil.example")
    finally:
        s.stop()
