"""The scripted model server: OpenAI-compatible JSON and SSE, from the official SDK's side."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

import pytest

import datagauntlet as dg


def _opening(env: dg.Environment) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    ep = env.episode(env.tasks("eval", 1)[0])
    return (
        [{"role": "system", "content": ep.system_prompt}, {"role": "user", "content": ep.prompt}],
        ep.tool_specs,
    )


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_json_and_sse_give_the_same_tool_call(env_id: str, mock_model: Any) -> None:
    import openai

    env = dg.make(env_id)
    server = mock_model(env)
    messages, tools = _opening(env)
    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    plain = client.chat.completions.create(model="default", messages=messages, tools=tools)
    call = plain.choices[0].message.tool_calls[0]
    assert plain.choices[0].finish_reason == "tool_calls"
    stream = client.chat.completions.create(
        model="default", messages=messages, tools=tools, stream=True,
        stream_options={"include_usage": True},
    )  # fmt: skip
    name, args, usage = "", "", None
    for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            for tc in choice.delta.tool_calls or []:
                name += tc.function.name or ""
                args += tc.function.arguments or ""
    assert (name, json.loads(args)) == (call.function.name, json.loads(call.function.arguments))
    assert usage is not None and usage.total_tokens > 0
    # the call is the reference policy's first call on a real episode
    assert call.function.name in [t["function"]["name"] for t in tools]


def test_model_name_picks_the_policy_and_history_drives_it(mock_model: Any) -> None:
    import openai

    env = dg.make("dirty-integration", profile="hostile")
    server = mock_model(env)
    models = {
        m["id"] for m in json.load(urllib.request.urlopen(server.base_url + "/models"))["data"]
    }
    assert models == {"default", *env.policies()}
    messages, tools = _opening(env)
    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    # a history whose first page says "no more pages": every policy submits next
    page = {"records": [{"id": "r1", "amount": "7"}], "next_cursor": None, "total": 1}
    first = {"name": "fetch_page", "arguments": '{"cursor": null}'}
    history = [
        *messages,
        {"role": "assistant", "tool_calls": [{"id": "c0", "type": "function", "function": first}]},
        {"role": "tool", "tool_call_id": "c0", "content": json.dumps(page)},
    ]
    reply = client.chat.completions.create(model="careful", messages=history, tools=tools)
    call = reply.choices[0].message.tool_calls[0]
    assert call.function.name == "submit_records"
    assert json.loads(call.function.arguments) == {"records": [{"id": "r1", "amount": 7}]}
    naive = client.chat.completions.create(model="naive", messages=history, tools=tools)
    assert json.loads(naive.choices[0].message.tool_calls[0].function.arguments) == {
        "records": [{"id": "r1", "amount": "7"}]
    }


def test_bad_requests_are_answered_with_400(mock_model: Any) -> None:
    server = mock_model(dg.make("dirty-integration"))
    url = server.base_url + "/chat/completions"
    for body in (b"{not json", b"[1]", b'{"messages": 3}', b'{"messages": [1]}'):
        req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req)
        assert err.value.code == 400
    assert (
        json.load(urllib.request.urlopen(server.base_url.removesuffix("/v1") + "/health"))["status"]
        == "ok"
    )


def test_mock_model_command_serves_on_the_port_it_prints() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "datagauntlet.cli.main", "mock-model", "--env", "dirty-integration",
         "--policy", "naive", "--port", "0"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        base_url = line.rsplit(" at ", 1)[1].strip()
        assert base_url.startswith("http://127.0.0.1:")
        health = json.load(urllib.request.urlopen(base_url.removesuffix("/v1") + "/health"))
        assert health == {"status": "ok", "env": "dirty-integration", "policy": "naive"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_unknown_policy_is_refused() -> None:
    from datagauntlet.frontdoors.mock_model import MockModelServer

    with pytest.raises(ValueError, match="no policy"):
        MockModelServer(dg.make("dirty-integration"), "no-such-policy")
