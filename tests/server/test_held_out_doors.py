"""A held-out task's seed never leaves the server: private sessions are opened and played to
the end through every door of a real session server (HTTP, both WebSocket routes, OpenEnv
over HTTP and WebSocket, MCP per session), and no byte any door returned, nor the server's
log, holds the decimal or hex form of any held-out seed. Each door names the task by its
opaque ref instead, the same ref for the same task."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from held_out_probe import (
    held_out_seeds,
    leaks,
    play_reference,
    raw_request,
    secret_in_environ,
)
from server_helpers import Server

import datagauntlet as dg

ENVS = dg.list_envs()
TASK = 1  # a private task of every env


@pytest.fixture(scope="module")
def seeds() -> dict[int, str]:
    with secret_in_environ():
        return held_out_seeds()


@pytest.fixture(scope="module")
def expected_refs() -> dict[str, str]:
    with secret_in_environ():
        return {e: getattr(dg.make(e).make_task("private", TASK), "ref", "") for e in ENVS}


@pytest.fixture(scope="module")
def server():
    with secret_in_environ():
        s = Server()
    yield s
    s.stop()


Door = Callable[[Server, str, list[bytes]], tuple[dict[str, Any], dict[str, Any]]]


def _http(server: Server, env_id: str, seen: list[bytes]) -> tuple[dict, dict]:
    def request(method: str, path: str, body: Any = None) -> Any:
        _status, raw = raw_request(server.port, method, path, body)
        seen.append(raw)
        return json.loads(raw)

    opening = request("POST", "/sessions", {"env": env_id, "split": "private", "task": TASK})
    sid = opening["session_id"]

    def step(name: str, arguments: Any) -> tuple[dict, dict | None]:
        reply = request("POST", f"/sessions/{sid}/call", {"name": name, "arguments": arguments})
        return reply["result"], reply.get("score")

    request("POST", f"/sessions/{sid}/call", {"name": "no_such_tool", "arguments": {}})
    score = play_reference(env_id, opening, step)
    for path in (f"/sessions/{sid}", "/sessions", f"/sessions/{sid}/score"):
        request("GET", path)
    request("DELETE", f"/sessions/{sid}")
    request("POST", "/sessions", {"env": env_id, "split": "private", "task": 10**6})
    return opening, score


def _ws_session(server: Server, env_id: str, seen: list[bytes]) -> tuple[dict, dict]:
    from websockets.sync.client import connect

    _status, raw = raw_request(
        server.port, "POST", "/sessions", {"env": env_id, "split": "private", "task": TASK}
    )
    seen.append(raw)
    opening = json.loads(raw)
    with connect(f"ws://127.0.0.1:{server.port}/sessions/{opening['session_id']}/ws") as ws:
        score = play_reference(env_id, opening, _ws_step(ws, seen))
        _ws_send(ws, seen, {"op": "score"})
        _ws_send(ws, seen, {"op": "close"})
    return opening, score


def _ws_chained(server: Server, env_id: str, seen: list[bytes]) -> tuple[dict, dict]:
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{server.port}/ws") as ws:
        open_msg = {"op": "open", "env": env_id, "split": "private", "task": TASK}
        opening = _ws_send(ws, seen, open_msg)
        score = play_reference(env_id, opening, _ws_step(ws, seen))
        _ws_send(ws, seen, {"op": "close"})
        _ws_send(ws, seen, {**open_msg, "task": 10**6})
    return opening, score


def _ws_send(ws: Any, seen: list[bytes], message: dict[str, Any]) -> Any:
    ws.send(json.dumps(message))
    raw = ws.recv()
    seen.append(raw.encode() if isinstance(raw, str) else raw)
    return json.loads(raw)


def _ws_step(ws: Any, seen: list[bytes]) -> Any:
    def step(name: str, arguments: Any) -> tuple[dict, dict | None]:
        reply = _ws_send(ws, seen, {"name": name, "arguments": arguments})
        return reply["result"], reply.get("score")

    return step


def _openenv_http(server: Server, env_id: str, seen: list[bytes]) -> tuple[dict, dict]:
    base = f"/openenv/{env_id}"

    def request(method: str, path: str, body: Any = None) -> Any:
        _status, raw = raw_request(server.port, method, base + path, body)
        seen.append(raw)
        return json.loads(raw)

    reset = request("POST", "/reset", {"task": TASK, "split": "private"})
    opening = reset["observation"]
    sid = opening["session_id"]
    request("GET", f"/state?episode_id={sid}")

    def step(name: str, arguments: Any) -> tuple[dict, dict | None]:
        reply = request(
            "POST", "/step", {"episode_id": sid, "action": {"tool": name, "arguments": arguments}}
        )
        return reply["observation"]["result"], reply["observation"].get("score")

    score = play_reference(env_id, opening, step)
    request("GET", f"/state?episode_id={sid}")
    seen.append(raw_request(server.port, "DELETE", f"/sessions/{sid}")[1])
    return opening, score


def _openenv_ws(server: Server, env_id: str, seen: list[bytes]) -> tuple[dict, dict]:
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{server.port}/openenv/{env_id}/ws") as ws:
        reset = {"type": "reset", "data": {"task": TASK, "split": "private"}}
        opening = _ws_send(ws, seen, reset)["data"]["observation"]
        _ws_send(ws, seen, {"type": "state"})

        def step(name: str, arguments: Any) -> tuple[dict, dict | None]:
            msg = {"type": "step", "data": {"tool": name, "arguments": arguments}}
            observation = _ws_send(ws, seen, msg)["data"]["observation"]
            return observation["result"], observation.get("score")

        score = play_reference(env_id, opening, step)
        _ws_send(ws, seen, {"type": "state"})
        ws.send(json.dumps({"type": "close"}))
    return opening, score


def _mcp_session(server: Server, env_id: str, seen: list[bytes]) -> tuple[dict, dict]:
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    _status, raw = raw_request(
        server.port, "POST", "/sessions", {"env": env_id, "split": "private", "task": TASK}
    )
    seen.append(raw)
    opening = json.loads(raw)
    url = f"{server.url}/sessions/{opening['session_id']}/mcp"

    async def play() -> dict[str, Any]:
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as s,
        ):
            seen.append((await s.initialize()).model_dump_json().encode())
            seen.append((await s.list_tools()).model_dump_json().encode())
            results: list[Any] = []

            async def call(name: str, arguments: Any) -> dict[str, Any]:
                out = await s.call_tool(name, arguments)
                seen.append(out.model_dump_json().encode())
                results.append(json.loads(out.content[0].text))
                return results[-1]

            return await _play_async(env_id, opening, call)

    score = asyncio.run(play())
    seen.append(raw_request(server.port, "DELETE", f"/sessions/{opening['session_id']}")[1])
    return opening, score


async def _play_async(env_id: str, opening: dict[str, Any], call: Any) -> dict[str, Any]:
    from held_out_probe import MAX_STEPS

    from datagauntlet.core.replay import next_tool_call

    env = dg.make(env_id)
    policy = env.policies()[env.reference]
    results: list[dict[str, Any]] = []
    for _ in range(MAX_STEPS):
        c = next_tool_call(
            policy, opening["system_prompt"], opening["prompt"], opening["tools"], results
        )
        assert c is not None
        result = await call(c.name, c.arguments)
        if "score" in result:
            return result["score"]  # type: ignore[no-any-return]
        results.append(result)
    raise AssertionError("no end")


DOORS: dict[str, Door] = {
    "http": _http,
    "ws-session": _ws_session,
    "ws-chained": _ws_chained,
    "openenv-http": _openenv_http,
    "openenv-ws": _openenv_ws,
    "mcp-session": _mcp_session,
}


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.parametrize("door", sorted(DOORS))
def test_no_held_out_seed_leaves_a_door(
    server: Server,
    seeds: dict[int, str],
    expected_refs: dict[str, str],
    door: str,
    env_id: str,
) -> None:
    seen: list[bytes] = []
    opening, score = DOORS[door](server, env_id, seen)
    assert score["reward"] == pytest.approx(1.0)  # played to the end: every reply was seen
    assert leaks(seen, seeds) == []
    # the task is named by its ref: opaque, and the same one the secret's holder derives
    task = opening["task"]
    assert "seed" not in task and task.get("ref") == expected_refs[env_id]
    assert task["ref"].encode() in b"".join(seen)


def test_server_log_holds_no_held_out_seed(seeds: dict[int, str]) -> None:
    with secret_in_environ():
        s = Server()
    seen: list[bytes] = []
    try:
        _http(s, "dataclean", seen)
        seen.append(raw_request(s.port, "POST", "/sessions", {"env": "dataclean", "split": "x"})[1])
    finally:
        log = s.stop()
    assert leaks([log.encode(), *seen], seeds) == []
