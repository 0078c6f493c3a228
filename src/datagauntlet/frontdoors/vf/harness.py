"""An in-package harness: the chat loop in this process, tools over MCP, no downloads.

verifiers' built-in chat harnesses run a script through `uv`, which fetches packages on every
run; this one needs nothing but what the `[verifiers]` extra installed, so `vf-eval` works
offline. It sends the system prompt and prompt, calls tools through the rollout's MCP servers,
and ends when the model answers without a tool call or verifiers refuses the next turn
(max turns, or the episode is over).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from typing import Any

from verifiers.v1.clients import ModelContext
from verifiers.v1.configs.harness import HarnessConfig
from verifiers.v1.harness import Harness
from verifiers.v1.runtimes import ProgramResult, Runtime
from verifiers.v1.task import TaskData
from verifiers.v1.trace import Trace


class LoopHarnessConfig(HarnessConfig):
    pass


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
        from verifiers.v1.harnesses.utils.mcp import call_mcp, connect_mcp

        from datagauntlet.frontdoors.models import http_client

        system, prompt = self.resolve_text_prompt(data)
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt or ""})
        servers = {n: {"url": u, "timeout": self.config.tool_timeout} for n, u in mcp_urls.items()}
        clock = _Clock(trace)
        async with AsyncExitStack() as stack:
            stack.callback(clock.record)
            tools, dispatch, conns = await connect_mcp({"mcpServers": servers}, stack)
            client = openai.AsyncOpenAI(
                base_url=endpoint, api_key=secret, max_retries=0, http_client=http_client()
            )
            stack.push_async_callback(client.close)
            while True:
                kwargs: dict[str, Any] = {"model": ctx.model, "messages": messages}
                if tools:
                    kwargs["tools"] = tools
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
                        content = await _run_call(call, dispatch, conns, call_mcp)
                    messages.append({"role": "tool", "tool_call_id": call.get("id", ""),
                                     "content": content})  # fmt: skip
        return ProgramResult(0, "", "")


async def _run_call(call: dict[str, Any], dispatch: Any, conns: Any, call_mcp: Any) -> Any:
    """A tool call's result content; malformed calls are answered as errors, not raised."""
    fn = call.get("function") or {}
    name = fn.get("name")
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except ValueError as exc:
        return json.dumps({"error": f"arguments are not valid JSON: {exc}"})
    if name not in dispatch:
        return json.dumps({"error": f"unknown tool {name!r}; available: {sorted(dispatch)}"})
    if not isinstance(args, dict):
        return json.dumps({"error": "arguments must be a JSON object"})
    return await call_mcp(conns, dispatch, name, args)


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
