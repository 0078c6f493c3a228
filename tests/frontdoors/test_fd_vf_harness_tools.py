"""The harness's two tool paths: worlds of this process called directly, or over MCP.

The direct path exists only for speed, so it must be indistinguishable from MCP: same tool
schemas, same result text (refusals included), same world effects, same scores; and it must
reach no world but the one whose key the rollout was handed.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Any

import pytest
from test_fd_vf_rollouts import assert_trace_matches, load_tasks

import datagauntlet as dg
from datagauntlet.core.runner import play
from datagauntlet.frontdoors.live import LiveEpisode
from datagauntlet.frontdoors.vf.tool_server import call_world, tool_server
from datagauntlet.frontdoors.vf.worlds import WORLDS


@pytest.fixture(scope="module")
def h() -> Any:
    """The harness module, imported when these tests run: it imports verifiers, too big to
    load at collection (see test_fd_vf_rollouts)."""
    pytest.importorskip("verifiers.v1")
    import datagauntlet.frontdoors.vf.harness as harness

    return harness


def _world(env: dg.Environment, index: int = 0) -> tuple[Any, str]:
    live = LiveEpisode.open_sync(env, env.tasks("eval", index + 1)[index])
    return live.ep, WORLDS.put(live)


def _free(key: str) -> None:
    entry = WORLDS.pop(key)
    if entry is not None:
        entry.live.close_sync()


def _calls(env: dg.Environment) -> list[tuple[str, Any]]:
    """The reference policy's calls on task 0, plus calls every env must refuse."""
    ep = env.episode(env.tasks("eval", 1)[0])
    seen: list[tuple[str, Any]] = []
    real = ep.call

    def record(name: Any, args: Any = None) -> dict[str, Any]:
        seen.append((name, json.loads(json.dumps(args))))
        return real(name, args)

    ep.call = record  # type: ignore[method-assign]
    env.policies()[env.reference](ep)
    first = ep.tool_names[0]
    malformed = [
        (first, {"no_such_argument": 1}),
        (first, "{not json"),  # as the model wrote it: the episode itself refuses and logs
        (first, '{"a": 1, "a": 2}'),
        (first, "[1, 2]"),
        ("no_such_tool", "{}"),
    ]
    return [*malformed, *seen, (first, {})]  # the last: after the end


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_direct_calls_answer_exactly_as_mcp_does(env_id: str, h: Any) -> None:
    env = dg.make(env_id)
    server = tool_server()
    ep_a, key_a = _world(env)
    ep_b, key_b = _world(env)
    calls = _calls(env)

    async def go() -> tuple[Any, Any, list[Any], list[Any]]:
        direct = h._local_worlds({"": server.url_for(key_a)})
        assert direct is not None
        fast = h._in_process_tools(*direct, timeout=60.0)
        async with AsyncExitStack() as stack:
            slow = await h._mcp_tools({"": server.url_for(key_b)}, 60.0, stack)
            out_a = [await fast.call(n, a) for n, a in calls]
            out_b = [await slow.call(n, a) for n, a in calls]
        return fast, slow, out_a, out_b

    try:
        fast, slow, out_a, out_b = asyncio.run(go())
        assert fast.schemas == slow.schemas
        assert [s["function"]["name"] for s in fast.schemas] == ep_a.tool_names
        assert out_a == out_b
        assert all("error" in json.loads(out) for out in out_a[:5] + out_a[-1:])
        log_a = [(e.tool, e.args, e.executed) for e in ep_a.log.entries]
        assert log_a == [(e.tool, e.args, e.executed) for e in ep_b.log.entries]
        assert len(log_a) == len(calls)  # malformed calls too reached the episode's log
        assert ep_a.fingerprint() == ep_b.fingerprint()
        assert ep_a.score().as_dict() == ep_b.score().as_dict()
    finally:
        _free(key_a)
        _free(key_b)


def test_only_this_servers_world_urls_are_called_directly(h: Any) -> None:
    server = tool_server()
    env = dg.make("dirty-integration")
    _, key = _world(env)
    try:
        assert h._local_worlds({"": server.url_for(key)}) == (server.registry, {"": key})
        for url in [
            f"http://127.0.0.1:1{server.base.rsplit(':', 1)[1]}/w/{key}/mcp",  # another port
            f"{server.base}/w/{key}/mcp/",
            f"{server.base}/w/{key}/x/mcp",
            f"{server.base}/w//mcp",
            f"{server.base}/mcp",
            f"http://host.docker.internal:{server.base.rsplit(':', 1)[1]}/w/{key}/mcp",
        ]:
            assert h._local_worlds({"": url}) is None, url
        # one server elsewhere puts every call of the rollout on MCP
        assert h._local_worlds({"a": server.url_for(key), "b": "http://127.0.0.1:9/mcp"}) is None
        assert h._local_worlds({}) is None
    finally:
        _free(key)


def test_a_forged_or_freed_key_reaches_no_world_directly(h: Any) -> None:
    server = tool_server()
    env = dg.make("dirty-integration")
    ep, key = _world(env)
    forged = key[:-2] + ("xx" if not key.endswith("xx") else "yy")
    try:
        direct = h._local_worlds({"": server.url_for(forged)})
        assert direct is not None
        tools = h._in_process_tools(*direct, timeout=60.0)
        assert tools.schemas == []
        before = ep.fingerprint()
        # the harness answers a name it did not list as unknown; even a direct call refuses
        out = asyncio.run(call_world(server.registry, forged, "fetch_page", {"cursor": None}))
        assert "error" in out and ep.fingerprint() == before and ep.calls == 0
        live = h._in_process_tools(server.registry, {"": key}, timeout=60.0)
    finally:
        _free(key)
    out = json.loads(asyncio.run(live.call("fetch_page", {"cursor": None})))
    assert "error" in out and ep.calls == 0  # freed after listing: nothing runs


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_rollouts_with_tools_over_mcp_score_like_in_process(
    env_id: str, mock_model: Any, monkeypatch: pytest.MonkeyPatch, h: Any
) -> None:
    import verifiers.v1 as vf

    def no_direct(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("in_process_tools is off: every call must go over MCP")

    monkeypatch.setattr(h, "_in_process_tools", no_direct)

    env = dg.make(env_id)
    server = mock_model(env)
    tasks = load_tasks(env_id, 1)
    agent = vf.Agent(
        vf.AgentConfig(
            model=env.reference,
            client=vf.EvalClientConfig(base_url=server.base_url, api_key_var="DG_NO_KEY"),
            harness={"id": env_id, "in_process_tools": False},
            runtime=vf.SubprocessConfig(),
            max_turns=1000,
        )
    )
    live = len(WORLDS)
    trace = asyncio.run(agent.run(tasks[0]))
    assert trace.stop_condition == "episode_done"
    assert_trace_matches(trace, play(env, env.reference, env.tasks("eval", 1)[0]))
    assert len(WORLDS) == live
