"""No truth before the end, at any door.

Until an episode is over, nothing an agent can reach may carry a figure derived from hidden
state: no tool result, HTTP answer, MCP response or printed line. Each env names the text its
hidden state would show (`Environment.truth_values`: labels, true values, the correct mart,
the quota); a score's own field names count too (a score read mid-episode shows, e.g., the
true record count as `records_missed`). Every door is played with the env's policies and
everything it sends back before the episode ends is scanned.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

import pytest

import datagauntlet as dg
from datagauntlet.core.env import policy_sees_truth
from datagauntlet.core.gates import leak_needles
from datagauntlet.core.replay import next_tool_call

TASKS = 2


def _needles(env: Any, task: Any) -> list[str]:
    ep = env.episode(task)
    try:
        return leak_needles(env, ep)
    finally:
        ep.close()


def _calls_before_the_end(env: Any, policy: str, task: Any) -> list[tuple[str, Any]]:
    """The calls a policy makes while its episode is still running (in process)."""
    ep = env.episode(task)
    calls: list[tuple[str, Any]] = []

    class Recorder:
        def __getattr__(self, name: str) -> Any:
            return getattr(ep, name)

        def call(self, name: str, args: Any = None) -> dict[str, Any]:
            out = ep.call(name, args)
            if not ep.done:
                calls.append((name, args))
            return out

    try:
        env.policies()[policy](Recorder())
    finally:
        ep.close()
    return calls


def _scan(texts: list[str], needles: list[str]) -> list[str]:
    return sorted({n for t in texts for n in needles if n and n in t})


def _cases() -> list[tuple[str, str]]:
    out = []
    for env_id in dg.list_envs():
        for name, fn in dg.make(env_id).policies().items():
            if not policy_sees_truth(fn):
                out.append((env_id, name))
    return out


@pytest.mark.parametrize(("env_id", "policy"), _cases())
def test_in_process_results_before_the_end(env_id: str, policy: str) -> None:
    env = dg.make(env_id)
    for task in env.tasks("eval", TASKS):
        ep = env.episode(task)
        seen = [ep.system_prompt, ep.prompt, json.dumps(ep.tool_specs)]
        try:
            for name, args in _calls_before_the_end(env, policy, task):
                seen.append(json.dumps(ep.call(name, args)))
        finally:
            ep.close()
        assert _scan(seen, _needles(env, task)) == [], (env_id, policy, task.id)


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_mcp_responses_before_the_end(env_id: str) -> None:
    from mcp import Client

    from datagauntlet.frontdoors.mcp_server import EpisodeTools, build_server

    env = dg.make(env_id)
    names = [n for n, fn in env.policies().items() if not policy_sees_truth(fn)]
    for task in env.tasks("eval", TASKS):
        needles = _needles(env, task)
        for policy in names:
            stop = len(_calls_before_the_end(env, policy, task))
            server = build_server(EpisodeTools.create(env, task), "t")

            async def go(stop: int = stop, policy: str = policy, server: Any = server) -> list[str]:
                async with Client(server) as client:
                    listed = await client.list_tools()
                    specs = [
                        {"type": "function", "function": {"name": t.name,
                         "description": t.description, "parameters": t.input_schema}}
                        for t in listed.tools
                    ]  # fmt: skip
                    seen = [client.instructions or "", json.dumps(specs)]
                    results: list[dict[str, Any]] = []
                    instructions = client.instructions or ""
                    while len(results) < stop:
                        call = next_tool_call(
                            env.policies()[policy], instructions, instructions, specs, results
                        )
                        assert call is not None
                        out = await client.call_tool(call.name, call.arguments)
                        seen.append(out.content[0].text)
                        results.append(json.loads(out.content[0].text))
                    return seen

            assert _scan(asyncio.run(go()), needles) == [], (env_id, policy, task.id)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.mark.parametrize("profile", ["realistic", "hostile"])
def test_http_api_before_the_end_and_its_score_endpoint(profile: str) -> None:
    """Every page, and GET /score asked after every request, carry no hidden figure."""
    from datagauntlet.frontdoors.serve import EpisodeHttpServer

    env = dg.make("dirty-integration", profile=profile, http_timeout_seconds=0.01)
    for task in env.tasks("eval", TASKS):
        needles = _needles(env, task)
        calls = _calls_before_the_end(env, "careful", task)
        server = EpisodeHttpServer.open(env, task).start()
        try:
            seen: list[str] = []
            for _name, args in calls:
                cursor = args["cursor"]
                _status, body = _get(
                    f"{server.url}/records" + ("" if cursor is None else f"?cursor={quote(cursor)}")
                )
                seen.append(body)
                status, score = _get(f"{server.url}/score")
                assert status == 409, score
                seen.append(score)
            assert _scan(seen, needles) == [], (profile, task.id)
        finally:
            server.close()


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_play_prints_nothing_hidden_before_the_end(env_id: str) -> None:
    """A person at the prompt: every call before the submission, and `score` asked mid-way."""
    env = dg.make(env_id)
    task = env.tasks("eval", 1)[0]
    lines = [f"{name} {json.dumps(args or {})}" for name, args in
             _calls_before_the_end(env, env.reference, task)]  # fmt: skip
    lines += ["score", "quit"]
    proc = subprocess.run(
        [sys.executable, "-m", "datagauntlet.cli.main", "play", env_id, "--seed", "0"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=120,
    )
    before_end = proc.stdout.split("episode over", 1)[0]
    assert "the score is shown when the episode ends" in before_end
    assert _scan([before_end, proc.stderr], _needles(env, task)) == []
