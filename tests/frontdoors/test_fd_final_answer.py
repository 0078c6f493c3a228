"""A final answer as a submission: every door reads an env's declaration the same way.

dataclean declares that a model's last message (no tool call) is its program; the other envs
declare nothing, so there a closing message is only the end of the conversation. The scripted
model's `final_answer` mode sends the reference policy's submission as that text.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core.runner import play
from datagauntlet.frontdoors.chat import policy_reply
from datagauntlet.frontdoors.evaluate import EvalSpec, run_eval
from datagauntlet.frontdoors.live import LiveEpisode
from datagauntlet.frontdoors.models import OpenAIModel

N_TASKS = 2


def _tasks(env: dg.Environment) -> list[dg.Task]:
    return env.tasks("eval", N_TASKS)


def test_the_scripted_model_answers_the_submission_in_words() -> None:
    env = dg.make("dataclean")
    live = LiveEpisode.open_sync(env, _tasks(env)[0])
    try:
        declared = env.final_answer
        policy = env.policies()[env.reference]
        history = [{"role": "system", "content": live.system_prompt},
                   {"role": "user", "content": live.prompt}]  # fmt: skip
        as_call = policy_reply(policy, history, live.tool_specs)
        as_text = policy_reply(policy, history, live.tool_specs, declared)
    finally:
        live.close_sync()
    (call,) = as_call["tool_calls"]
    assert call["function"]["name"] == declared.tool
    assert "tool_calls" not in as_text and isinstance(as_text["content"], str)
    assert declared.read(as_text["content"]) == json.loads(call["function"]["arguments"])


def test_an_env_without_a_declaration_has_no_final_answer_mode() -> None:
    from datagauntlet.frontdoors.mock_model import MockModelServer

    with pytest.raises(ValueError, match="final message"):
        MockModelServer(dg.make("dirty-integration"), final_answer=True)


def _eval(env: dg.Environment, base_url: str, tmp: Any) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        model = OpenAIModel(env.reference, base_url, "DG_NO_KEY", retries=0)
        try:
            spec = EvalSpec(n=N_TASKS, label="m")
            return (await run_eval(env, spec, model, tmp)).records
        finally:
            await model.close()

    return asyncio.run(go())


def test_eval_reads_the_final_message_as_the_program(mock_model: Any, tmp_path: Any) -> None:
    env = dg.make("dataclean")
    server = mock_model(env, final_answer=True)
    records = _eval(env, server.base_url, tmp_path)
    for record, task in zip(records, _tasks(env), strict=True):
        expected = play(env, env.reference, task)
        assert record["stop"] == "final_answer" and record["status"] == "ok"
        assert record["reward"] == expected.reward and expected.reward == 1.0
        assert record["components"] == expected.components
        assert record["final_answer"]["status"] == "accepted"
        assert "tool_calls" not in record["messages"][-1]


def test_eval_ignores_a_closing_message_where_nothing_is_declared(
    mock_model: Any, tmp_path: Any
) -> None:
    env = dg.make("dirty-integration")
    script = [{"role": "assistant", "content": '{"records": []}'}]
    server = mock_model(env, script=script)
    for record in _eval(env, server.base_url, tmp_path):
        assert record["stop"] == "no_tool_call" and record["final_answer"] is None
        assert record["reward"] == 0.0


def test_an_unreadable_final_answer_is_refused_and_logged(mock_model: Any) -> None:
    from datagauntlet.frontdoors.loop import LoopResult, run_loop

    env = dg.make("dataclean")
    server = mock_model(env, script=[{"role": "assistant", "content": "I cleaned it."}])
    live = LiveEpisode.open_sync(env, _tasks(env)[0])
    result = LoopResult([])

    async def go() -> None:
        model = OpenAIModel("m", server.base_url, "DG_NO_KEY", retries=0)
        try:
            await run_loop(live, model, 10, result)
        finally:
            await model.close()

    try:
        asyncio.run(go())
        assert result.stop == "final_answer" and "unreadable" in result.final_answer["error"]
        (entry,) = live.ep.log.entries
        assert entry.tool == "submit_program" and not entry.executed
        assert live.score_sync().reward == 0.0
    finally:
        live.close_sync()


@pytest.mark.parametrize("env_id", ["dataclean", "dirty-integration"])
def test_mcp_offers_the_final_answer_only_where_declared(env_id: str) -> None:
    from mcp import Client

    from datagauntlet.core.replay import next_tool_call
    from datagauntlet.frontdoors.mcp_server import FINAL_ANSWER_TOOL, EpisodeTools, build_server

    env = dg.make(env_id)
    task = _tasks(env)[1]
    tools = EpisodeTools.create(env, task)
    declared = env.final_answer
    server = build_server(tools, "t")

    async def go() -> tuple[list[str], dict[str, Any]]:
        async with Client(server) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            specs = [s for s in tools.specs if s["function"]["name"] != FINAL_ANSWER_TOOL]
            results: list[dict[str, Any]] = []
            while True:
                live = tools.live
                policy = env.policies()[env.reference]
                call = next_tool_call(policy, live.system_prompt, live.prompt, specs, results)
                assert call is not None
                if declared is not None and call.name == declared.tool:
                    text = declared.write(call.arguments)
                    out = await client.call_tool(FINAL_ANSWER_TOOL, {"text": text})
                else:
                    out = await client.call_tool(call.name, call.arguments)
                results.append(json.loads(out.content[0].text))
                if "score" in results[-1]:
                    return listed, results[-1]

    try:
        listed, last = asyncio.run(go())
        log = [e.tool for e in tools.live.ep.log.entries]
    finally:
        asyncio.run(tools.close())
    assert (FINAL_ANSWER_TOOL in listed) == (env_id == "dataclean")
    assert FINAL_ANSWER_TOOL not in log  # the answer is logged as the declared tool's call
    expected = play(env, env.reference, task)
    assert last["score"]["reward"] == expected.reward == 1.0


def test_verifiers_reads_the_final_message_as_the_program(mock_model: Any) -> None:
    pytest.importorskip("verifiers.v1")
    from test_fd_vf_rollouts import assert_trace_matches, load_tasks, run_agent

    env = dg.make("dataclean")
    server = mock_model(env, final_answer=True)
    traces = run_agent(server.base_url, env.reference, "dataclean", load_tasks("dataclean", 2), 50)
    for trace, task in zip(traces, _tasks(env), strict=True):
        assert trace.assistant_messages[-1].tool_calls is None
        assert_trace_matches(trace, play(env, env.reference, task))
