"""`WS /ws`: sessions of every env opened, played and closed one after another on one
connection, each to its in-process score; hostile messages answered in JSON; a dropped
connection frees its session; a foreign Host is refused at the handshake and over HTTP."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from typing import Any

import pytest
from server_helpers import Server

import datagauntlet as dg
from datagauntlet.core.replay import next_tool_call
from datagauntlet.core.runner import play


@pytest.fixture(scope="module")
def server():
    s = Server("--max-sessions", "8")
    yield s
    s.stop()


def _connect(server: Server, path: str = "/ws", **kwargs: Any) -> Any:
    from websockets.sync.client import connect

    return connect(f"ws://127.0.0.1:{server.port}{path}", **kwargs)


def _ask(ws: Any, message: Any) -> dict[str, Any]:
    ws.send(message if isinstance(message, (str, bytes)) else json.dumps(message))
    return json.loads(ws.recv())


def _wait_sessions(server: Server, n: int) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        open_now = server.request("GET", "/health")[1]["sessions"]
        if open_now == n:
            return n
        time.sleep(0.05)
    return open_now


def test_every_env_task_after_task_on_one_connection(server: Server) -> None:
    with _connect(server) as ws:
        for env_id in dg.list_envs():
            env = dg.make(env_id)
            policy = env.policies()[env.reference]
            for task in (0, 1):
                expected = play(env, env.reference, env.make_task("eval", task))
                opening = _ask(ws, {"op": "open", "env": env_id, "task": task})
                assert opening["env"] == env_id and opening["task"]["index"] == task, opening
                results: list[dict[str, Any]] = []
                final = None
                prompts = opening["system_prompt"], opening["prompt"], opening["tools"]
                while final is None:
                    call = next_tool_call(policy, *prompts, results)
                    assert call is not None
                    reply = _ask(ws, {"name": call.name, "arguments": call.arguments})
                    results.append(reply["result"])
                    final = reply.get("score")
                assert final["reward"] == expected.reward
                assert _ask(ws, {"op": "score"})["score"] == final
                closed = _ask(ws, {"op": "close"})
                assert closed == {"closed": True, "score": final}
                status, _ = server.request("GET", f"/sessions/{opening['session_id']}")
                assert status == 404
    assert _wait_sessions(server, 0) == 0


@pytest.mark.parametrize(
    ("message", "status", "words"),
    [
        ("{broken", 400, "not valid JSON"),
        ('{"name": "x", "name": "y"}', 400, "duplicate key"),
        ("[1, 2]", 400, "JSON object"),
        ({"op": "dance"}, 400, '{"op": "open", ...}'),
        ({"op": "open", "env": "nope"}, 400, "unknown environment"),
        ({"op": "open", "env": "dataclean", "seeed": 1}, 400, "unknown field 'seeed'"),
        ({"op": "open", "env": "dataclean", "task": "3"}, 400, "task must be int"),
        ({"name": "fetch_page"}, 409, "no session on this connection"),
        ({"op": "score"}, 409, "no session on this connection"),
        ({"op": "close"}, 409, "no session on this connection"),
    ],
)
def test_hostile_messages_get_json_errors_and_the_connection_lives(
    server: Server, message: Any, status: int, words: str
) -> None:
    with _connect(server) as ws:
        reply = _ask(ws, message)
        assert reply["status"] == status and words in reply["error"], reply
        opening = _ask(ws, {"op": "open", "env": "dirty-integration"})  # still usable
        assert "session_id" in opening
        assert _ask(ws, {"op": "close"})["closed"] is True


def test_one_session_at_a_time_and_binary_frames_work(server: Server) -> None:
    with _connect(server) as ws:
        first = _ask(ws, {"op": "open", "env": "dirty-integration"})
        again = _ask(ws, {"op": "open", "env": "dirty-integration"})
        assert again["status"] == 409 and first["session_id"] in again["error"]
        reply = _ask(ws, json.dumps({"name": "fetch_page", "arguments": {}}).encode())
        assert "records" in reply["result"] or "error" in reply["result"]
        assert _ask(ws, {"op": "score"})["status"] == 409  # not over
        assert _ask(ws, {"op": "close"})["closed"] is True
        assert _ask(ws, {"name": "fetch_page"})["status"] == 409  # closed: no session now


def test_a_dropped_connection_closes_its_session(server: Server) -> None:
    with _connect(server) as ws:
        opening = _ask(ws, {"op": "open", "env": "bad-batch-gate"})
        assert server.request("GET", f"/sessions/{opening['session_id']}")[0] == 200
    assert _wait_sessions(server, 0) == 0
    assert server.request("GET", f"/sessions/{opening['session_id']}")[0] == 404


def test_the_session_limit_over_ws_is_a_429(server: Server) -> None:
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(_connect(server)) for _ in range(9)]
        replies = [_ask(ws, {"op": "open", "env": "dirty-integration"}) for ws in sockets]
        refused = [r for r in replies if "error" in r]
        assert len(refused) == 1 and refused[0]["status"] == 429
        assert "session limit reached: 8" in refused[0]["error"]
    assert _wait_sessions(server, 0) == 0


def test_an_oversized_message_closes_only_that_connection() -> None:
    small = Server("--max-sessions", "4")
    try:
        from websockets.exceptions import ConnectionClosed

        with (
            _connect(small, max_size=None) as ws,
            pytest.raises((ConnectionClosed, OSError)),  # 1009, or a reset mid-send
        ):
            ws.send("x" * (9 * 1024 * 1024))
            ws.recv()
        with _connect(small) as ws:
            assert "session_id" in _ask(ws, {"op": "open", "env": "dataclean"})
    finally:
        small.stop()


def test_a_foreign_host_is_refused_at_the_handshake_and_in_json(server: Server) -> None:
    for path in ("/ws", "/sessions/x/ws"):
        for host in ("evil.example", "127.0.0.1.evil.example:80", None):
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
                head = f"Host: {host}\r\n" if host else ""
                sock.sendall(
                    f"GET {path} HTTP/1.1\r\n{head}Upgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    "Sec-WebSocket-Version: 13\r\n\r\n".encode()
                )
                status_line = sock.recv(4096).split(b"\r\n", 1)[0]
            assert b" 403 " in status_line, (path, host, status_line)
    status, reply = server.request("GET", "/health", headers={"Host": "evil.example:80"})
    assert status == 403 and "refused" in reply["error"] and reply["status"] == 403


def test_an_unknown_session_id_is_a_json_404_then_close(server: Server) -> None:
    with _connect(server, "/sessions/nope/ws") as ws:
        reply = json.loads(ws.recv())
        assert reply == {"error": "no such session", "status": 404}


def test_a_server_bug_answers_one_message_with_a_json_500() -> None:
    """Driven over raw ASGI: the store's create fails as a bug would, the connection lives."""
    import asyncio

    from datagauntlet.frontdoors.server import ws as ws_route
    from datagauntlet.frontdoors.server.sessions import SessionStore

    store = SessionStore()

    async def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    store.create = broken  # type: ignore[method-assign]
    inbox = [
        {"type": "websocket.connect"},
        {"type": "websocket.receive", "text": '{"op": "open", "env": "dataclean"}'},
        {"type": "websocket.receive", "text": '{"op": "score"}'},
        {"type": "websocket.disconnect", "code": 1000},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return inbox.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(ws_route.serve({"type": "websocket", "path": "/ws"}, receive, send, store))
    replies = [json.loads(m["text"]) for m in sent if m["type"] == "websocket.send"]
    assert sent[0]["type"] == "websocket.accept"
    assert replies == [
        {"error": "internal error: RuntimeError", "status": 500},
        {"error": ws_route.NO_SESSION, "status": 409},
    ]
