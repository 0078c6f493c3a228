"""`datagauntlet mcp`: whole episodes played through the official MCP client, both transports."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fd_helpers import replayable_pairs

import datagauntlet as dg
from datagauntlet.core.replay import next_tool_call
from datagauntlet.core.runner import play

# The SDKs are imported inside the tests, so collecting them loads nothing heavy.
CLI = [sys.executable, "-m", "datagauntlet.cli.main", "mcp"]


async def _play(client: Any, policy: Any) -> tuple[list[dict[str, Any]], str]:
    """Play a policy through an MCP client: its next call comes from the results so far."""
    listed = await client.list_tools()
    specs = [{"type": "function", "function": {"name": t.name, "description": t.description,
              "parameters": t.input_schema}} for t in listed.tools]  # fmt: skip
    instructions = client.instructions or ""
    results: list[dict[str, Any]] = []
    while True:
        call = next_tool_call(policy, instructions, instructions, specs, results)
        if call is None:
            return results, instructions
        out = await client.call_tool(call.name, call.arguments)
        results.append(json.loads(out.content[0].text))
        assert out.structured_content == results[-1]
        assert bool(out.is_error) == ("error" in results[-1])


def _expected(env_id: str, policy: str, index: int) -> Any:
    env = dg.make(env_id)
    return play(env, policy, env.tasks("eval", index + 1)[index])


def _assert_final(results: list[dict[str, Any]], expected: Any) -> None:
    final = results[-1]["score"]
    assert final["reward"] == expected.reward
    assert {k: c["value"] for k, c in final["components"].items()} == expected.components
    assert all("score" not in r for r in results[:-1])


@pytest.mark.parametrize(("env_id", "policy"), replayable_pairs())
def test_every_policy_through_the_sdk_client(env_id: str, policy: str) -> None:
    from mcp import Client

    from datagauntlet.frontdoors.mcp_server import EpisodeTools, build_server

    env = dg.make(env_id)
    server = build_server(EpisodeTools.create(env, env.tasks("eval", 1)[0]), "t")

    async def go() -> list[dict[str, Any]]:
        async with Client(server) as client:
            return (await _play(client, env.policies()[policy]))[0]

    _assert_final(asyncio.run(go()), _expected(env_id, policy, 0))


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_stdio_episode_scores_like_in_process(env_id: str, tmp_path: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = dg.make(env_id)
    policy = env.reference
    errlog = (tmp_path / "stderr.log").open("w+")
    # the SDK passes only a few variables to the server; keep the import path of this run
    path = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], env_id, "--task", "1"], env=path)

    async def go() -> tuple[list[dict[str, Any]], str]:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            return await _play(client, env.policies()[policy])

    results, instructions = asyncio.run(go())
    expected = _expected(env_id, policy, 1)
    ep = env.episode(env.tasks("eval", 2)[1])
    assert ep.system_prompt in instructions and ep.prompt in instructions
    _assert_final(results, expected)
    errlog.seek(0)
    logged = [json.loads(line) for line in errlog if line.startswith('{"')]
    assert [entry["reward"] for entry in logged if entry["event"] == "score"] == [expected.reward]


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_http_episode_scores_like_in_process(env_id: str) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    env = dg.make(env_id)
    proc = subprocess.Popen(
        [*CLI, env_id, "--transport", "http", "--port", "0", "--task", "2"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        url = proc.stderr.readline().rsplit(" at ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

        async def go() -> list[dict[str, Any]]:
            async with Client(streamable_http_client(url)) as client:
                results, _ = await _play(client, env.policies()[env.reference])
                # after the score, the episode is over: further calls are refused
                first = (await client.list_tools()).tools[0].name
                again = await client.call_tool(first, {})
                assert again.is_error and "over" in json.loads(again.content[0].text)["error"]
                return results

        results = asyncio.run(go())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    _assert_final(results, _expected(env_id, env.reference, 2))


def test_bad_input_is_an_error_result_and_changes_nothing() -> None:
    from mcp import Client

    from datagauntlet.frontdoors.mcp_server import EpisodeTools, build_server

    env = dg.make("dirty-integration")
    tools = EpisodeTools.create(env, env.tasks("eval", 1)[0])
    ep = tools.live.ep
    before = ep.fingerprint()
    server = build_server(tools, "t")

    async def go() -> list[Any]:
        async with Client(server) as client:
            return [
                await client.call_tool("no_such_tool", {}),
                await client.call_tool("fetch_page", {"cursor": {"x": 1}}),
                await client.call_tool("submit_records", {}),
            ]

    for out in asyncio.run(go()):
        assert out.is_error and "error" in json.loads(out.content[0].text)
    assert ep.fingerprint() == before and not ep.done
