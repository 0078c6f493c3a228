"""One trajectory, malformed calls included, played through eval, MCP and verifiers.

Each door hands the tool calls to the episode exactly as the model wrote them, so the three
action logs (hash chain included) and the three scores must be identical. The trajectory is
served by the scripted model over real HTTP (eval, verifiers) and sent through the official MCP
client, the raw argument text in the request's `_meta` (MCP itself carries only objects).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fd_helpers import record_live_episodes

import datagauntlet as dg
from datagauntlet.frontdoors.live import LiveEpisode
from datagauntlet.frontdoors.loop import LoopResult, run_loop
from datagauntlet.frontdoors.models import OpenAIModel

ENDINGS: dict[str, dict[str, Any]] = {
    "dirty-integration": {"tool": "submit_records",
                          "arguments": '{"records": [{"id": "r1", "amount": 5}]}'},
    "bad-batch-gate": {"tool": "submit_report", "arguments": '{"loaded": [], "quarantined": []}'},
    # dataclean reads its final message as the program
    "dataclean": {"text": '```json\n{"operations": [{"op": "strip", "columns": ["notes"]}]}\n```'},
    # an input file is no remediation script: refused, logged, nothing changes
    "event-recon": {"tool": "submit_report",
                    "arguments": '{"findings": [], "script_path": "INTEGRATION.md"}'},
}  # fmt: skip
# an env not listed: the conversation just ends (a final message, which it may read or not)
CLOSING = {"text": "I am done."}


def _calls(*calls: tuple[Any, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(calls)
    ]}  # fmt: skip


def trajectory(env_id: str, first_tool: str) -> list[dict[str, Any]]:
    end = ENDINGS.get(env_id, CLOSING)
    last = (
        {"role": "assistant", "content": end["text"]}
        if "text" in end
        else _calls((end["tool"], end["arguments"]))
    )
    return [
        _calls((first_tool, "{not json"), ("no_such_tool", "{}")),
        _calls((first_tool, '{"a": 1, "a": 2}')),
        _calls((first_tool, '{"x": NaN}')),
        _calls((first_tool, "[1, 2]")),
        _calls((first_tool, '{"no_such_argument": 1}')),
        _calls((first_tool, "{}")),
        last,
    ]


def _log(live: LiveEpisode) -> list[dict[str, Any]]:
    return live.run_sync(lambda ep: ep.log.as_list())


def _play_eval(env: dg.Environment, base_url: str) -> tuple[list[dict[str, Any]], Any]:
    live = LiveEpisode.open_sync(env, env.tasks("eval", 1)[0])

    async def go() -> None:
        model = OpenAIModel("m", base_url, "DG_NO_KEY", retries=0)
        try:
            await run_loop(live, model, 50, LoopResult([]))
        finally:
            await model.close()

    try:
        asyncio.run(go())
        return _log(live), live.score_sync().as_dict()
    finally:
        live.close_sync()


def _play_mcp(env: dg.Environment, script: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    from mcp import Client

    from datagauntlet.frontdoors.mcp_server import (
        FINAL_ANSWER_TOOL,
        RAW_ARGUMENTS_META,
        EpisodeTools,
        build_server,
    )

    tools = EpisodeTools.create(env, env.tasks("eval", 1)[0])

    async def go() -> None:
        async with Client(build_server(tools, "t")) as client:
            for message in script:
                if not message.get("tool_calls") and env.final_answer is not None:
                    await client.call_tool(FINAL_ANSWER_TOOL, {"text": message["content"]})
                for call in message.get("tool_calls") or []:
                    fn = call["function"]
                    meta = {RAW_ARGUMENTS_META: fn["arguments"]}
                    await client.call_tool(fn["name"], {}, meta=meta)

    try:
        asyncio.run(go())
        return _log(tools.live), tools.live.score_sync().as_dict()
    finally:
        asyncio.run(tools.close())


def _play_vf(env_id: str, base_url: str, monkeypatch: Any) -> tuple[list[Any], Any]:
    from test_fd_vf_rollouts import load_tasks, run_agent

    opened = record_live_episodes(monkeypatch)
    (trace,) = run_agent(base_url, "m", env_id, load_tasks(env_id, 1), 50)
    assert trace.errors == []
    (live,) = opened
    assert live.closed  # freed once scored
    rewards = {k: r.score for k, r in trace.rewards.items()}
    return live.ep.log.as_list(), rewards


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_one_trajectory_gives_one_log_and_one_score_at_every_door(
    env_id: str, mock_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("verifiers.v1")
    env = dg.make(env_id)
    live = LiveEpisode.open_sync(env, env.tasks("eval", 1)[0])
    first_tool = live.tool_specs[0]["function"]["name"]
    live.close_sync()
    script = trajectory(env_id, first_tool)
    server = mock_model(env, script=script)

    log_eval, score_eval = _play_eval(env, server.base_url)
    log_mcp, score_mcp = _play_mcp(env, script)
    log_vf, rewards_vf = _play_vf(env_id, server.base_url, monkeypatch)

    ends_with_a_call = "tool" in ENDINGS.get(env_id, CLOSING) or env.final_answer is not None
    assert len(log_eval) == 7 + ends_with_a_call  # every call, malformed ones included
    assert sum(not e["executed"] for e in log_eval) >= 6
    assert log_mcp == log_eval
    assert log_vf == log_eval
    assert score_mcp == score_eval
    assert rewards_vf == {k: c["value"] for k, c in score_eval["components"].items()}
    assert json.dumps(log_eval).count("unknown tool") == 1
