"""One episode's tools over the Model Context Protocol, with the official `mcp` SDK (2.0).

`datagauntlet mcp ENV` serves the tools of one fresh episode, over stdio or streamable HTTP,
so any MCP-capable agent harness can play it. The server's instructions carry the system
prompt and the task prompt. When a call ends the episode (the submitting tool, or a limit),
its result carries the score, and the score is logged as one JSON line on stderr.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.frontdoors.live import LiveEpisode, Step
from datagauntlet.frontdoors.origin_guard import Guard, GuardedApp

logger = logging.getLogger("datagauntlet.mcp")

ScoreSink = Callable[[dict[str, Any]], None]

# Where a client may put a tool call's arguments exactly as its model wrote them (JSON text):
# MCP carries arguments as an object, so text a model got wrong (bad JSON, a duplicate key)
# could not otherwise reach the episode, which answers and logs it like every other door.
RAW_ARGUMENTS_META = "datagauntlet/arguments"

FINAL_ANSWER_TOOL = "final_answer"


def instructions_of(live: LiveEpisode) -> str:
    return f"{live.system_prompt}\n\nTask: {live.prompt}"


def raw_arguments(meta: Any, arguments: Any) -> Any:
    """The arguments to hand to `Episode.call`: the raw text in `_meta` when a client sent it."""
    if isinstance(meta, dict) and isinstance(meta.get(RAW_ARGUMENTS_META), str):
        return meta[RAW_ARGUMENTS_META]
    return arguments


def final_answer_spec() -> dict[str, Any]:
    """The one tool an MCP client has for the env's final answer: an MCP server never sees the
    agent's last message, so that message is sent here instead, and read as the env declares."""
    return {
        "type": "function",
        "function": {
            "name": FINAL_ANSWER_TOOL,
            "description": (
                "Give your final answer as text, as the task asks for it (your last message, "
                "if you were chatting); it is read once and ends the task."
            ),
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": False,
            },
        },
    }


class EpisodeTools:
    """One live episode's tools as an MCP server serves them; the score is reported once."""

    def __init__(self, live: LiveEpisode, on_score: ScoreSink | None = None) -> None:
        self.live = live
        self.on_score = on_score
        self.final: dict[str, Any] | None = None
        self.specs = list(live.tool_specs)
        if live.reads_final_answer:
            if FINAL_ANSWER_TOOL in {s["function"]["name"] for s in self.specs}:
                raise ValueError(f"the env already has a tool named {FINAL_ANSWER_TOOL!r}")
            self.specs.append(final_answer_spec())

    @classmethod
    def create(
        cls, env: Environment, task: Task, on_score: ScoreSink | None = None
    ) -> EpisodeTools:
        """A fresh episode, built on the thread that will run its calls."""
        return cls(LiveEpisode.open_sync(env, task), on_score)

    async def call(self, name: Any, arguments: Any) -> dict[str, Any]:
        if name == FINAL_ANSWER_TOOL and self.live.reads_final_answer:
            step = await self.live.answer(_answer_text(arguments))
            assert step is not None  # the env reads final answers
        else:
            step = await self.live.call(name, arguments)
        return self._reported(step)

    def _reported(self, step: Step) -> dict[str, Any]:
        if step.score is None:
            return step.result
        ep = self.live.ep
        self.final = {
            "env": ep.env.id,
            "task": ep.task.as_dict(),
            "stop_reason": ep.stop_reason,
            **step.score.as_dict(),
        }
        if self.on_score:
            self.on_score(self.final)
        return {**step.result, "score": step.score.as_dict()}

    async def close(self) -> None:
        await self.live.close()


def _answer_text(arguments: Any) -> str:
    """The text of a final_answer call; anything else is handed over as its JSON, so the env
    refuses it in its own words."""
    if isinstance(arguments, dict) and isinstance(arguments.get("text"), str):
        return arguments["text"]
    return arguments if isinstance(arguments, str) else json.dumps(arguments, default=str)


def tool_result(result: dict[str, Any]) -> Any:
    """An MCP CallToolResult: the result as JSON text and as structured content."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(result))],
        structured_content=result,
        is_error="error" in result,
    )


def mcp_tools(specs: list[dict[str, Any]]) -> list[Any]:
    from mcp.types import Tool

    return [
        Tool(
            name=s["function"]["name"],
            description=s["function"]["description"],
            input_schema=s["function"]["parameters"],
        )
        for s in specs
    ]


def meta_of(context: Any) -> Any:
    """The `_meta` of the tools/call request being handled (None outside a request)."""
    try:
        return context.request_context.meta
    except (AttributeError, ValueError):
        return None


def build_server(tools: EpisodeTools, name: str) -> Any:
    """An MCPServer whose catalogue is the episode's tool specs, schemas as declared."""
    from mcp.server.mcpserver import MCPServer

    listed = mcp_tools(tools.specs)

    class EpisodeServer(MCPServer):  # type: ignore[misc]
        async def list_tools(self) -> list[Any]:
            return listed

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            args = raw_arguments(meta_of(context), arguments)
            return tool_result(await tools.call(name, args))

    return EpisodeServer(name, instructions=instructions_of(tools.live), log_level="WARNING")


def log_score(final: dict[str, Any]) -> None:
    print(json.dumps({"event": "score", **final}, sort_keys=True), file=sys.stderr, flush=True)


@contextmanager
def episode_tools(
    env: Environment, task: Task, on_score: ScoreSink | None = None
) -> Iterator[EpisodeTools]:
    """A fresh episode's tools for as long as the server runs; closed however it stops."""
    tools = EpisodeTools.create(env, task, on_score)
    try:
        yield tools
    finally:
        tools.live.close_sync()


def serve_stdio(env: Environment, task: Task) -> None:
    with episode_tools(env, task, log_score) as tools:
        build_server(tools, f"datagauntlet-{env.id}").run("stdio")


def unguarded() -> Any:
    """The SDK's own Host/Origin check off: the one shared guard (origin_guard.py) wraps the
    app instead, so every door refuses the same requests in the same words."""
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def serve_http(
    env: Environment,
    task: Task,
    host: str,
    port: int,
    announce: Callable[[str], None],
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
) -> None:
    """Streamable HTTP at http://host:port/mcp; `announce` gets the URL once it is bound.
    Only loopback Host/Origin headers are answered, plus those the operator allowed."""
    with episode_tools(env, task, log_score) as tools:
        _serve_http(tools, env, host, port, announce, Guard(allowed_hosts, allowed_origins))


def _serve_http(
    tools: EpisodeTools,
    env: Environment,
    host: str,
    port: int,
    announce: Callable[[str], None],
    guard: Guard,
) -> None:
    import uvicorn

    from datagauntlet.frontdoors.http_json import listen_error

    server = build_server(tools, f"datagauntlet-{env.id}")
    app = server.streamable_http_app(json_response=True, transport_security=unguarded(), host=host)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Without this, a reply written in two parts waits ~40 ms for a delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise listen_error(host, port, exc) from None
    sock.listen(1024)  # clients that connect before uvicorn is up wait in the backlog
    announce(f"http://{host}:{sock.getsockname()[1]}/mcp")
    config = uvicorn.Config(GuardedApp(app, guard), log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
