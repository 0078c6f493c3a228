"""verifiers 0.4 rollouts, run in process against the scripted model over real HTTP.

Rewards and metrics must equal the env's own Score of the same policy on the same task; worlds
must be freed once scored; a forged or stale world key must reach nothing.
"""

from __future__ import annotations

import asyncio
import json
import math
import urllib.error
import urllib.request
from types import SimpleNamespace
from typing import Any

import pytest
from fd_helpers import replayable_pairs

import datagauntlet as dg
from datagauntlet.core.runner import play
from datagauntlet.frontdoors.live import LiveEpisode
from datagauntlet.frontdoors.loop import LoopResult, run_loop
from datagauntlet.frontdoors.models import PolicyModel
from datagauntlet.frontdoors.vf.tool_server import tool_server
from datagauntlet.frontdoors.vf.worlds import WORLDS

N_TASKS = 2


@pytest.fixture(scope="module", autouse=True)
def vf() -> Any:
    """verifiers, imported when these tests run (not at collection: it is 200 MB of modules
    that would slow the garbage collector for every other test)."""
    return pytest.importorskip("verifiers.v1")


def taskset_for(env_id: str) -> Any:
    from datagauntlet.frontdoors.vf.taskset import taskset_for as factory

    return factory(env_id)


def load_tasks(env_id: str, n: int, **config: Any) -> list[Any]:
    if "max_turns" in dg.make(env_id).config.as_dict():
        config.setdefault("max_turns", 1000)  # no turn budget binds: in-process is the reference
    import verifiers.v1 as vf

    cfg = vf.resolve_env_config({"taskset": {"id": env_id, "num_tasks": n, **config}}).taskset
    return list(taskset_for(env_id)(cfg))


def run_agent(
    base_url: str, model: str, env_id: str, tasks: list[Any], max_turns: int
) -> list[Any]:
    import verifiers.v1 as vf

    agent = vf.Agent(
        vf.AgentConfig(
            model=model,
            client=vf.EvalClientConfig(base_url=base_url, api_key_var="DG_NO_KEY"),
            harness={"id": env_id},
            runtime=vf.SubprocessConfig(),
            max_turns=max_turns,
        )
    )

    async def go() -> list[Any]:
        return list(await asyncio.gather(*(agent.run(t) for t in tasks)))

    return asyncio.run(go())


def assert_trace_matches(trace: Any, expected: Any) -> None:
    assert trace.errors == [], trace.errors
    assert {k: r.score for k, r in trace.rewards.items()} == expected.components
    total = sum(r.score * r.weight for r in trace.rewards.values())
    assert math.isclose(total, expected.reward, abs_tol=1e-6)
    numeric = {k: float(v) for k, v in expected.metrics.items() if isinstance(v, (int, float))}
    assert trace.metrics == numeric  # the Score's metrics, one to one, nothing else


@pytest.mark.parametrize(("env_id", "policy"), replayable_pairs())
def test_rollouts_score_like_in_process(env_id: str, policy: str, mock_model: Any) -> None:
    env = dg.make(env_id)
    server = mock_model(env)
    tasks = load_tasks(env_id, N_TASKS)
    live = len(WORLDS)
    traces = run_agent(server.base_url, policy, env_id, tasks, max_turns=1000)
    for trace, dg_task in zip(traces, env.tasks("eval", N_TASKS), strict=True):
        assert trace.stop_condition == "episode_done"
        expected = play(env, policy, dg_task)
        assert_trace_matches(trace, expected)
        # the code's and the task's versions (the task's hash covers the config the taskset ran)
        same_config = dg.make(env_id, **tasks[0].data.env_config)
        assert trace.info["versions"] == play(same_config, policy, dg_task).stamp
    assert len(WORLDS) == live  # every world freed once its rollout was scored


def test_rewards_and_weights_come_from_the_env(mock_model: Any) -> None:
    for env_id in dg.list_envs():
        env = dg.make(env_id)
        (task,) = load_tasks(env_id, 1)
        names = {fn.__name__: fn._vf_weight for fn in task.hooks("reward")}
        assert names == dict(env.weights)


def test_config_fields_map_to_taskset_fields(mock_model: Any, vf: Any) -> None:
    env = dg.make("dirty-integration", profile="hostile", num_records=12, max_turns=1000)
    server = mock_model(env)
    tasks = load_tasks("dirty-integration", 1, profile="hostile", num_records=12, split="test")
    assert tasks[0].data.env_config == env.config.as_dict()
    assert tasks[0].data.seed == env.tasks("test", 1)[0].seed
    (trace,) = run_agent(server.base_url, "careful", "dirty-integration", tasks, 1000)
    assert_trace_matches(trace, play(env, "careful", env.tasks("test", 1)[0]))
    with pytest.raises(Exception, match="profile"):
        vf.resolve_env_config({"taskset": {"id": "dirty-integration", "profile": "nope"}})


def test_max_turns_stops_and_scores_what_happened(mock_model: Any) -> None:
    env = dg.make("dirty-integration")
    server = mock_model(env)
    tasks = load_tasks("dirty-integration", 1)
    (trace,) = run_agent(server.base_url, "careful", "dirty-integration", tasks, max_turns=2)
    assert trace.stop_condition == "max_turns"
    live = LiveEpisode.open_sync(env, env.tasks("eval", 1)[0])
    asyncio.run(run_loop(live, PolicyModel(env.policies()["careful"]), 2, LoopResult([])))
    assert_trace_matches(trace, _as_result(live.score_sync()))
    live.close_sync()


def test_the_env_turn_budget_applies(mock_model: Any) -> None:
    env = dg.make("dirty-integration", max_turns=3)
    server = mock_model(env)
    tasks = load_tasks("dirty-integration", 1, max_turns=3)
    (trace,) = run_agent(server.base_url, "careful", "dirty-integration", tasks, max_turns=1000)
    assert trace.stop_condition == "turn_limit"
    live = LiveEpisode.open_sync(env, env.tasks("eval", 1)[0])
    asyncio.run(run_loop(live, PolicyModel(env.policies()["careful"]), 3, LoopResult([])))
    assert_trace_matches(trace, _as_result(live.score_sync()))
    live.close_sync()


def _as_result(score: dg.Score) -> Any:
    components = {k: c["value"] for k, c in score.components.items()}
    return SimpleNamespace(reward=score.reward, components=components, metrics=score.metrics)


def test_the_world_key_stays_out_of_the_trace(mock_model: Any) -> None:
    env = dg.make("dirty-integration")
    server = mock_model(env)
    tasks = load_tasks("dirty-integration", 1)
    (trace,) = run_agent(server.base_url, "naive", "dirty-integration", tasks, 1000)
    key = trace.state.world_key
    assert len(key) >= 43
    dumped = trace.model_dump_json()
    assert key not in dumped
    assert all(key not in json.dumps(m, default=str) for m in trace.model_dump().values())


def _mcp_post(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(url, data=body, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    })  # fmt: skip
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


def test_forged_or_freed_keys_reach_no_world() -> None:
    env = dg.make("dirty-integration")
    live = LiveEpisode.open_sync(env, env.tasks("eval", 1)[0])
    ep = live.ep
    key = WORLDS.put(live)
    server = tool_server()
    try:
        listed = _mcp_post(server.url_for(key), "tools/list", {})
        assert [t["name"] for t in listed["result"]["tools"]] == ep.tool_names
        forged = server.url_for(key[:-2] + "xx")
        assert _mcp_post(forged, "tools/list", {})["result"]["tools"] == []
        before = ep.fingerprint()
        out = _mcp_post(forged, "tools/call", {"name": "fetch_page", "arguments": {"cursor": None}})
        assert out["result"]["isError"] is True and ep.fingerprint() == before and ep.calls == 0
        with pytest.raises(urllib.error.HTTPError) as err:
            _mcp_post(server.base + "/mcp", "tools/list", {})
        assert err.value.code == 404
    finally:
        WORLDS.pop(key)
        live.close_sync()
    out = _mcp_post(server.url_for(key), "tools/call", {"name": "fetch_page", "arguments": {}})
    assert out["result"]["isError"] is True and ep.calls == 0


def test_rollouts_sharing_one_task_object_get_worlds_of_their_own(mock_model: Any) -> None:
    # verifiers runs `-r N` as N concurrent rollouts of the same Task object
    env = dg.make("dirty-integration", profile="hostile", max_turns=1000)
    server = mock_model(env)
    (task,) = load_tasks("dirty-integration", 1, profile="hostile")
    live = len(WORLDS)
    traces = run_agent(server.base_url, "careful", "dirty-integration", [task] * 4, 1000)
    keys = {t.state.world_key for t in traces}
    assert len(keys) == 4
    expected = play(env, "careful", env.tasks("eval", 1)[0])
    for trace in traces:
        assert_trace_matches(trace, expected)
    assert len(WORLDS) == live


@pytest.mark.parametrize("harness", ["mini_swe_agent", "terminus_2"])
def test_a_harness_without_mcp_is_refused_by_verifiers_own_check(harness: str) -> None:
    import verifiers.v1 as vf

    from datagauntlet.frontdoors.vf.taskset import NO_WORLD_URL, EpisodeTask

    # outside a rollout the tasks declare their toolset all the same, so the check sees it
    (toolset,) = EpisodeTask.toolsets(vf.TaskConfig())
    assert toolset.config.url == NO_WORLD_URL
    (task,) = load_tasks("dirty-integration", 1)
    live = len(WORLDS)
    agent = vf.Agent(
        vf.AgentConfig(
            model="careful",
            client=vf.EvalClientConfig(base_url="http://127.0.0.1:9/v1", api_key_var="DG_NO_KEY"),
            harness={"id": harness},
            runtime=vf.SubprocessConfig(),
        )
    )
    with pytest.raises(ValueError, match="does not support MCP tools"):
        asyncio.run(agent.run(task))
    assert len(WORLDS) == live  # refused before any world was made


def test_a_rollouts_world_key_does_not_depend_on_call_order() -> None:
    from datagauntlet.frontdoors.vf.taskset import WorldState

    (task,) = load_tasks("dirty-integration", 1)
    runtime = SimpleNamespace(config=SimpleNamespace(type="subprocess"))

    async def rollout(toolsets_first: bool) -> tuple[str, str]:
        before = task.toolsets(task.config)[0].config.url if toolsets_first else None
        trace = SimpleNamespace(state=WorldState())
        await task.setup(trace, runtime)
        after = task.toolsets(task.config)[0].config.url
        assert before in (None, after)
        assert WORLDS.get(trace.state.world_key) is not None
        return after, trace.state.world_key

    async def go() -> list[tuple[str, str]]:
        return list(await asyncio.gather(rollout(True), rollout(False)))

    live = len(WORLDS)
    results = asyncio.run(go())
    for url, key in results:
        assert url == tool_server().url_for(key)
    assert len({key for _, key in results}) == 2  # one world each
    assert len(WORLDS) == live  # freed when each rollout's task ended, never scored


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_loading_the_taskset_builds_no_world(env_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []
    monkeypatch.setattr(dg.Episode, "_open", lambda ep: built.append(ep))
    tasks = load_tasks(env_id, 5)
    assert len(tasks) == 5 and built == []
    env = dg.make(env_id, **tasks[0].data.env_config)
    info = env.task_info(env.tasks("eval", 1)[0])
    assert (tasks[0].data.prompt, tasks[0].data.system_prompt) == (info.prompt, info.system_prompt)
    assert tasks[0].data.metadata == info.metadata


def test_the_task_data_carries_the_versions_so_its_hash_follows_them() -> None:
    env = dg.make("dirty-integration")
    (task,) = load_tasks(env.id, 1)
    assert task.data.versions == env.versions()
    bumped = task.with_data(versions={**env.versions(), "generator_version": "999"})
    assert bumped.hash != task.hash
