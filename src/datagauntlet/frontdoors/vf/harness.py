"""An in-package harness: the chat loop in this process, tools over MCP, no downloads.

verifiers' built-in chat harnesses run a script through `uv`, which fetches packages on every
run; this one needs nothing but what the `[verifiers]` extra installed, so `vf-eval` works
offline. It sends the system prompt and prompt, calls tools through the rollout's MCP servers,
and ends when the model answers without a tool call or verifiers refuses the next turn
(max turns, or the episode is over).

When every MCP server of the rollout is a world of this process's own tool server (the
datagauntlet tasksets' toolsets), the harness calls that world in process instead: the same
registry lookup by the same key, the same episode thread, the same result text, without the
HTTP and MCP round trip that made up ~95% of a tool call's time (about 3 ms of it, against
~0.1 ms of env work). `in_process_tools: false` keeps every call on MCP.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from verifiers.v1.clients import ModelContext
from verifiers.v1.configs.harness import HarnessConfig
from verifiers.v1.harness import Harness
from verifiers.v1.runtimes import ProgramResult, Runtime
from verifiers.v1.task import TaskData
from verifiers.v1.trace import Trace

from datagauntlet.frontdoors.vf.worlds import WorldRegistry


class LoopHarnessConfig(HarnessConfig):
    in_process_tools: bool = True
    """Call worlds served by this process's tool server directly, not over HTTP."""


# (the name the model wrote, its arguments as the model wrote them) -> the result's content
ToolCall = Callable[[Any, Any], Awaitable[Any]]


@dataclass
class _Tools:
    """A rollout's tools: OpenAI schemas, and the call that returns a result's content."""

    schemas: list[dict[str, Any]]
    call: ToolCall


class LoopHarness(Harness[LoopHarnessConfig]):
    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: ModelContext,
        trace: Trace,
        runtime: Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: TaskData,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        import openai

        from datagauntlet.frontdoors.models import http_client

        system, prompt = self.resolve_text_prompt(data)
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt or ""})
        clock = _Clock(trace)
        async with AsyncExitStack() as stack:
            stack.callback(clock.record)
            local = _local_worlds(mcp_urls) if self.config.in_process_tools else None
            if local is not None:
                tools = _in_process_tools(*local, self.config.tool_timeout)
            else:
                tools = await _mcp_tools(mcp_urls, self.config.tool_timeout, stack)
            client = openai.AsyncOpenAI(
                base_url=endpoint, api_key=secret, max_retries=0, http_client=http_client()
            )
            stack.push_async_callback(client.close)
            while True:
                kwargs: dict[str, Any] = {"model": ctx.model, "messages": messages}
                if tools.schemas:
                    kwargs["tools"] = tools.schemas
                try:
                    with clock.timing("model"):
                        response = await client.chat.completions.create(**kwargs)
                except openai.APIError as exc:
                    # A refused turn (a stop or max turns) is the normal end of a rollout.
                    code = 0 if trace.stop_condition is not None else 1
                    return ProgramResult(code, "", f"model call failed: {exc}")
                if not response.choices:
                    return ProgramResult(1, "", "the model answered with no choices")
                message = response.choices[0].message.model_dump(exclude_none=True)
                messages.append(message)
                calls = message.get("tool_calls") or []
                if not calls:
                    return ProgramResult(0, "", "")
                for call in calls:
                    with clock.timing("tool"):
                        content = await _run_call(call, tools)
                    messages.append({"role": "tool", "tool_call_id": call.get("id", ""),
                                     "content": content})  # fmt: skip
        return ProgramResult(0, "", "")


def _tool_name(server: str, tool: str) -> str:
    # as verifiers' connect_mcp names them
    return f"{server}_{tool}" if server else tool


def _local_worlds(mcp_urls: dict[str, str]) -> tuple[WorldRegistry, dict[str, str]] | None:
    """The registry and {server name: world key}, when every URL is a world of this process's
    tool server (a URL rewritten for a container, or any other server, keeps MCP)."""
    from datagauntlet.frontdoors.vf.tool_server import running_tool_server

    server = running_tool_server()
    if server is None or not mcp_urls:
        return None
    keys: dict[str, str] = {}
    for name, url in mcp_urls.items():
        key = server.key_of(url)
        if key is None:
            return None
        keys[name] = key
    return server.registry, keys


def _in_process_tools(registry: WorldRegistry, keys: dict[str, str], timeout: float) -> _Tools:
    """The tools of this process's worlds, called as the tool server would call them."""
    from datagauntlet.frontdoors.vf.tool_server import call_world, world_tools

    tools: list[dict[str, Any]] = []
    dispatch: dict[str, tuple[str, str]] = {}
    for name, key in keys.items():
        for tool in world_tools(registry.get(key)):  # an unknown or freed key lists none
            full = _tool_name(name, tool.name)
            if full in dispatch:
                raise ValueError(f"duplicate tool name {full!r}")
            tools.append({"type": "function", "function": {
                "name": full, "description": tool.description or "",
                "parameters": tool.input_schema}})  # fmt: skip
            dispatch[full] = (key, tool.name)
    only = _only_server(keys)

    async def call_tool(full: Any, arguments: Any) -> Any:
        if isinstance(full, str) and full in dispatch:
            key, raw = dispatch[full]
        elif only is not None:
            key, raw = keys[only], full
        else:
            return json.dumps(_unknown(full, dispatch))
        result = await asyncio.wait_for(call_world(registry, key, raw, arguments), timeout)
        return json.dumps(result)  # the text of the MCP result's one content block

    return _Tools(tools, call_tool)


def _only_server(servers: Mapping[str, Any]) -> str | None:
    """The one unprefixed server a name nobody listed goes to, so that the episode itself
    answers and logs it; with several servers nobody can tell which one was meant."""
    return "" if list(servers) == [""] else None


def _unknown(name: Any, dispatch: Mapping[str, Any]) -> dict[str, Any]:
    return {"error": f"unknown tool {name!r}; available: {sorted(dispatch)}"}


async def _mcp_tools(mcp_urls: dict[str, str], timeout: float, stack: AsyncExitStack) -> _Tools:
    from verifiers.v1.harnesses.utils.mcp import connect_mcp, mcp_content_to_chat_content

    from datagauntlet.core.call_text import loads_strict
    from datagauntlet.frontdoors.mcp_server import RAW_ARGUMENTS_META

    servers = {n: {"url": u, "timeout": timeout} for n, u in mcp_urls.items()}
    tools, dispatch, conns = await connect_mcp({"mcpServers": servers}, stack)
    only = _only_server(conns)

    async def call_tool(full: Any, arguments: Any) -> Any:
        if isinstance(full, str) and full in dispatch:
            server, raw = dispatch[full]
        elif only is not None:
            server, raw = only, full
        else:
            return json.dumps(_unknown(full, dispatch))
        # MCP carries an object; the text the model wrote rides along in `_meta`, and that is
        # what datagauntlet's tool servers hand to the episode (other servers get the object)
        meta = {RAW_ARGUMENTS_META: arguments} if isinstance(arguments, str) else None
        try:
            value = loads_strict(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            value = None
        wire = value if isinstance(value, dict) else {}
        name = raw if isinstance(raw, str) else json.dumps(raw)
        result = await conns[server].run(lambda client: client.call_tool(name, wire, meta=meta))
        return mcp_content_to_chat_content(result.content)

    return _Tools(tools, call_tool)


async def _run_call(call: dict[str, Any], tools: _Tools) -> Any:
    """A tool call's result content. The name and the arguments go as the model wrote them:
    the episode answers malformed ones (and logs them) exactly as at every other door."""
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    return await tools.call(fn.get("name"), fn.get("arguments"))


class _Clock:
    """Wall time the harness spent waiting on the model and on tools, kept in
    `trace.info["harness_seconds"]` (not metrics: those are the env's Score, one to one)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.seconds = {"model": 0.0, "tool": 0.0}

    @contextmanager
    def timing(self, what: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[what] += time.perf_counter() - start

    def record(self) -> None:
        self.trace.info["harness_seconds"] = {k: round(v, 6) for k, v in self.seconds.items()}
