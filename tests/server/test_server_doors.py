"""The same sessions over WebSocket, over MCP with the SDK's own client, and through OpenEnv's
own client (openenv-core): each plays the reference policy to the in-process score."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from server_helpers import Server

import datagauntlet as dg
from datagauntlet.core.replay import next_tool_call
from datagauntlet.core.runner import play


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.stop()


def _expected(env_id: str, index: int = 0) -> Any:
    env = dg.make(env_id)
    return env, play(env, env.reference, env.make_task("eval", index))


def _components(score: dict[str, Any]) -> dict[str, float]:
    return {k: c["value"] for k, c in score["components"].items()}


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_websocket_stepping(server: Server, env_id: str) -> None:
    from websockets.sync.client import connect

    env, expected = _expected(env_id)
    _status, opening = server.request("POST", "/sessions", {"env": env_id})
    policy = env.policies()[env.reference]
    results: list[dict[str, Any]] = []
    final = None
    with connect(f"ws://127.0.0.1:{server.port}/sessions/{opening['session_id']}/ws") as ws:
        ws.send("{broken")
        assert "not valid JSON" in json.loads(ws.recv())["error"]
        while final is None:
            call = next_tool_call(
                policy, opening["system_prompt"], opening["prompt"], opening["tools"], results
            )
            assert call is not None
            ws.send(json.dumps({"name": call.name, "arguments": call.arguments}))
            reply = json.loads(ws.recv())
            results.append(reply["result"])
            final = reply.get("score")
        ws.send(json.dumps({"op": "close"}))
        assert json.loads(ws.recv())["closed"] is True
    assert final["reward"] == expected.reward and _components(final) == expected.components


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_mcp_per_session_with_the_sdk_client(server: Server, env_id: str) -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    env, expected = _expected(env_id)
    _status, opening = server.request("POST", "/sessions", {"env": env_id})
    url = f"{server.url}/sessions/{opening['session_id']}/mcp"
    policy = env.policies()[env.reference]

    async def play_over_mcp() -> dict[str, Any]:
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            listed = {t.name for t in (await s.list_tools()).tools}
            assert {t["function"]["name"] for t in opening["tools"]} <= listed
            results: list[dict[str, Any]] = []
            while True:
                call = next_tool_call(
                    policy, opening["system_prompt"], opening["prompt"], opening["tools"], results
                )
                assert call is not None
                out = await s.call_tool(call.name, call.arguments)
                result = json.loads(out.content[0].text)
                if "score" in result:
                    return result["score"]
                results.append(result)

    final = asyncio.run(play_over_mcp())
    assert final["reward"] == expected.reward and _components(final) == expected.components
    assert server.request("DELETE", f"/sessions/{opening['session_id']}")[0] == 200


def test_mcp_refuses_a_foreign_origin(server: Server) -> None:
    status, opening = server.request("POST", "/sessions", {"env": "dataclean"})
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    status, _ = server.request(
        "POST",
        f"/sessions/{opening['session_id']}/mcp",
        body,
        headers={
            "Origin": "http://evil.example",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert status == 403
    server.request("DELETE", f"/sessions/{opening['session_id']}")


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_openenv_client_plays_each_env(server: Server, env_id: str) -> None:
    pytest.importorskip("openenv.core")
    from openenv.core.generic_client import GenericEnvClient

    env, expected = _expected(env_id)
    policy = env.policies()[env.reference]
    with GenericEnvClient(base_url=f"{server.url}/openenv/{env_id}").sync() as client:
        first = client.reset(task=0)
        obs = first.observation
        assert first.reward is None and not first.done
        results: list[dict[str, Any]] = []
        step = first
        while not step.done:
            call = next_tool_call(
                policy, obs["system_prompt"], obs["prompt"], obs["tools"], results
            )
            assert call is not None
            step = client.step({"tool": call.name, "arguments": call.arguments})
            if not step.done:
                assert step.reward is None  # no figure from the hidden state before the end
            results.append(step.observation["result"])
        assert step.reward == expected.reward
        assert _components(step.observation["score"]) == expected.components
        state = client.state()
        assert state["done"] is True and state["step_count"] == len(results)


def test_openenv_http_routes(server: Server) -> None:
    for route in ("health", "metadata", "schema", "state"):
        status, body = server.request("GET", f"/openenv/dataclean/{route}")
        assert status == 200, (route, body)
    assert server.request("GET", "/openenv/dataclean/health")[1] == {"status": "healthy"}
    assert "action" in server.request("GET", "/openenv/dataclean/schema")[1]
    status, body = server.request("POST", "/openenv/nope/reset", {})
    assert status == 404 and "unknown environment" in body["error"]
    status, reset = server.request("POST", "/openenv/dirty-integration/reset", {"task": 1})
    sid = reset["observation"]["session_id"]
    status, step = server.request(
        "POST",
        "/openenv/dirty-integration/step",
        {"episode_id": sid, "action": {"tool": "fetch_page", "arguments": {"cursor": None}}},
    )
    assert status == 200 and "records" in step["observation"]["result"] and step["reward"] is None
    status, step = server.request(
        "POST", "/openenv/dirty-integration/step", {"action": {"tool": "x"}}
    )
    assert status == 400 and "episode_id" in step["error"]
    server.request("DELETE", f"/sessions/{sid}")
