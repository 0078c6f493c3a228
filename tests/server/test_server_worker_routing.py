"""A server of several worker processes behind one address: a session's calls arriving on
connections that different workers took (HTTP, WebSocket, MCP, OpenEnv) get exactly what one
process gives, and a hostile request for another worker's session is refused as its owner would."""

from __future__ import annotations

import json
from typing import Any

import pytest
from server_helpers import Server
from worker_connections import Pinned, pinned

import datagauntlet as dg
from datagauntlet.core.replay import next_tool_call


@pytest.fixture(scope="module")
def server():
    s = Server("--workers", "3", "--max-sessions", "64")
    yield s
    s.stop()


@pytest.fixture
def conns(server: Server):
    # Pinned afresh for each test: the server closes a connection idle for 5 s (uvicorn's
    # keep-alive), which a busy machine can reach between two tests of one module.
    found = pinned(server, 3)
    yield found
    for c in found.values():
        c.close()


def _in_process(env: Any, index: int, calls: list[tuple[str, Any]]) -> list[Any]:
    ep = env.episode(env.make_task("eval", index))
    try:
        out = [json.loads(json.dumps(ep.call(name, args))) for name, args in calls]
        return [*out, json.loads(json.dumps(ep.score().as_dict()))]
    finally:
        ep.close()


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_calls_spread_over_workers_get_one_process_results(
    server: Server, conns: dict[int, Pinned], env_id: str
) -> None:
    env = dg.make(env_id)
    policy = env.policies()[env.reference]
    order = list(conns.values())
    status, opening = order[1].request("POST", "/sessions", {"env": env_id, "task": 1})
    assert status == 201, opening
    sid = opening["session_id"]
    assert sid.startswith(f"{order[1].worker}."), sid  # the id names the worker holding it
    calls: list[tuple[str, Any]] = []
    results: list[Any] = []
    reply: dict[str, Any] = {}
    prompts = opening["system_prompt"], opening["prompt"], opening["tools"]
    while "score" not in reply:
        call = next_tool_call(policy, *prompts, results)
        assert call is not None
        conn = order[len(calls) % len(order)]  # each call on the next worker's connection
        calls.append((call.name, call.arguments))
        status, reply = conn.request(
            "POST", f"/sessions/{sid}/call", {"name": call.name, "arguments": call.arguments}
        )
        assert status == 200, reply
        results.append(reply["result"])
    assert len(calls) >= 2 or env_id == "dataclean"
    assert [*results, reply["score"]] == _in_process(env, 1, calls)
    for conn in order:  # every worker answers for the session alike
        assert conn.request("GET", f"/sessions/{sid}/score") == (200, reply["score"])
        state = conn.request("GET", f"/sessions/{sid}")[1]
        assert state["calls"] == len(calls) and state["done"] is True
    assert order[2].request("DELETE", f"/sessions/{sid}")[0] == 200
    for conn in order:
        assert conn.request("GET", f"/sessions/{sid}")[0] == 404


def test_answers_lists_and_health_cover_every_worker(conns: dict[int, Pinned]) -> None:
    a, b, c = conns[0], conns[1], conns[2]
    sids = [
        conn.request("POST", "/sessions", {"env": "dataclean"})[1]["session_id"]
        for conn in (a, b, c)
    ]
    for conn in (a, b, c):
        listed = {s["session_id"] for s in conn.request("GET", "/sessions")[1]["sessions"]}
        assert set(sids) <= listed
        health = conn.request("GET", "/health")[1]
        assert health["sessions"] >= 3 and health["status"] == "ok"
        assert [w["worker"] for w in health["workers"]] == [0, 1, 2]
    status, reply = b.request("POST", f"/sessions/{sids[0]}/answer", {"text": "[]"})
    assert status == 200 and reply["done"] is True and "score" in reply
    assert c.request("GET", f"/sessions/{sids[0]}/score") == (200, reply["score"])
    for sid, conn in zip(sids, (c, a, b), strict=True):
        assert conn.request("DELETE", f"/sessions/{sid}")[0] == 200


def test_websocket_to_a_session_another_worker_holds(
    server: Server, conns: dict[int, Pinned]
) -> None:
    from websockets.exceptions import ConnectionClosedOK
    from websockets.sync.client import connect

    env = dg.make("bad-batch-gate")
    owner = conns[0]
    opening = owner.request("POST", "/sessions", {"env": "bad-batch-gate", "task": 2})[1]
    sid = opening["session_id"]
    ws = None
    for _ in range(200):  # a connection some other worker took: it relays to the owner
        ws = connect(f"ws://127.0.0.1:{server.port}/sessions/{sid}/ws")
        if ws.response.headers["x-datagauntlet-worker"] != "0":
            break
        ws.close()
    assert ws is not None and ws.response.headers["x-datagauntlet-worker"] != "0"
    policy = env.policies()[env.reference]
    calls: list[tuple[str, Any]] = []
    results: list[Any] = []
    reply: dict[str, Any] = {}
    with ws:
        ws.send("{broken")
        assert "not valid JSON" in json.loads(ws.recv())["error"]
        while "score" not in reply:
            call = next_tool_call(
                policy, opening["system_prompt"], opening["prompt"], opening["tools"], results
            )
            assert call is not None
            calls.append((call.name, call.arguments))
            ws.send(json.dumps({"name": call.name, "arguments": call.arguments}))
            reply = json.loads(ws.recv())
            results.append(reply["result"])
        ws.send(json.dumps({"op": "close"}))
        assert json.loads(ws.recv())["closed"] is True
        with pytest.raises(ConnectionClosedOK):  # the owner closed it; the relay closed ours
            ws.recv(timeout=10)
    assert ws.close_code == 1000
    assert [*results, reply["score"]] == _in_process(env, 2, calls)
    assert owner.request("GET", f"/sessions/{sid}")[0] == 404


def _passed_on(conn: Pinned) -> int:
    return sum(w["passed_on"] for w in conn.request("GET", "/health")[1]["workers"])


def test_mcp_to_a_session_another_worker_holds(server: Server, conns: dict[int, Pinned]) -> None:
    pytest.importorskip("mcp")
    import asyncio

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    env = dg.make("dirty-integration")
    policy = env.policies()[env.reference]

    async def play(url: str, opening: dict[str, Any]) -> dict[str, Any]:
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            results: list[dict[str, Any]] = []
            prompts = opening["system_prompt"], opening["prompt"], opening["tools"]
            while True:
                call = next_tool_call(policy, *prompts, results)
                assert call is not None
                out = json.loads((await s.call_tool(call.name, call.arguments)).content[0].text)
                if "score" in out:
                    return out["score"]
                results.append(out)

    # The client's connections land where the kernel puts them: play until some were passed on
    # (a session of worker 0, three workers: each try misses the others with p <= 1/3).
    for attempt in range(8):
        before = _passed_on(conns[0])
        opening = conns[0].request("POST", "/sessions", {"env": env.id, "task": attempt})[1]
        score = asyncio.run(play(f"{server.url}/sessions/{opening['session_id']}/mcp", opening))
        assert score["reward"] == 1.0
        conns[0].request("DELETE", f"/sessions/{opening['session_id']}")
        if _passed_on(conns[0]) > before:
            return
    raise AssertionError("no MCP request reached another worker in 8 tries")


def test_openenv_http_steps_through_any_worker(conns: dict[int, Pinned]) -> None:
    a, b = conns[0], conns[1]
    status, reset = a.request("POST", "/openenv/dirty-integration/reset", {"task": 1})
    sid = reset["observation"]["session_id"]
    assert sid.startswith("0.")
    action = {"tool": "fetch_page", "arguments": {"cursor": None}}
    status, step = b.request(
        "POST", "/openenv/dirty-integration/step", {"episode_id": sid, "action": action}
    )
    assert status == 200 and "records" in step["observation"]["result"] and step["reward"] is None
    status, state = b.request("GET", f"/openenv/dirty-integration/state?episode_id={sid}")
    assert status == 200 and state["episode_id"] == sid and state["step_count"] == 1
    status, body = b.request("POST", "/openenv/dirty-integration/step", raw=b"{nope")
    assert status == 400 and "not valid JSON" in body["error"]
    b.request("DELETE", f"/sessions/{sid}")


@pytest.mark.parametrize(
    ("method", "path", "raw", "headers", "status", "words"),
    [
        ("POST", "/sessions/7.abc/call", b'{"name": "x"}', {}, 404, "no such session"),
        ("POST", "/sessions/abc/call", b'{"name": "x"}', {}, 404, "no such session"),
        ("GET", "/sessions/0./score", None, {}, 404, "no such session"),
        ("GET", "/sessions/99999999999999.x", None, {}, 404, "no such session"),
        ("POST", "/sessions/OTHER/call", b"x" * (9 * 1024 * 1024), {}, 413, "over the limit"),
        ("POST", "/sessions/OTHER/answer", b'{"text": "done"}', {}, 400, "reads no final answer"),
        ("POST", "/sessions/OTHER/call", b"{not json", {}, 400, "not valid JSON"),
        ("POST", "/sessions/OTHER/call", b'{"name": 3}', {}, 400, "name must be str"),
        ("GET", "/sessions/OTHER/nowhere", None, {}, 404, "no route"),
    ],
)
def test_hostile_requests_for_another_workers_session(
    server: Server, method, path, raw, headers, status, words
) -> None:
    c = pinned(server, 3)  # fresh connections: a refused body may leave one unusable
    owner, other = c[1], c[2]
    sid = owner.request("POST", "/sessions", {"env": "dirty-integration"})[1]["session_id"]
    try:
        got, reply = other.request(method, path.replace("OTHER", sid), raw=raw, **headers)
        assert got == status, reply
        assert isinstance(reply, dict) and words in reply["error"], reply
        assert owner.request("GET", f"/sessions/{sid}")[1]["calls"] == 0
    finally:
        owner.request("DELETE", f"/sessions/{sid}")
        for conn in c.values():
            conn.close()


def test_a_forged_hop_header_is_just_another_request(conns: dict[int, Pinned]) -> None:
    owner, other = conns[0], conns[1]
    sid = owner.request("POST", "/sessions", {"env": "dirty-integration"})[1]["session_id"]
    body = {"name": "fetch_page", "arguments": {"cursor": None}}
    for value in ("", "guess", "x" * 200):
        status, reply = other.request(
            "POST", f"/sessions/{sid}/call", body, **{"x-datagauntlet-hop": value}
        )
        assert status == 200 and "records" in reply["result"], reply  # passed on all the same
    assert owner.request("GET", f"/sessions/{sid}")[1]["calls"] == 3
    owner.request("DELETE", f"/sessions/{sid}")
