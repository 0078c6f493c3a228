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
from collections.abc import Callable, Sequence
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Episode, Task
from datagauntlet.frontdoors.pinned import Pinned

logger = logging.getLogger("datagauntlet.mcp")

ScoreSink = Callable[[dict[str, Any]], None]


def instructions_of(ep: Episode) -> str:
    return f"{ep.system_prompt}\n\nTask: {ep.prompt}"


class EpisodeTools:
    """The tools of one episode, called one at a time on the episode's own thread."""

    def __init__(
        self, ep: Episode, on_score: ScoreSink | None = None, worker: Pinned | None = None
    ) -> None:
        self.ep = ep
        self.on_score = on_score
        self._lock = asyncio.Lock()
        self._worker = worker or Pinned()
        self.final: dict[str, Any] | None = None

    @classmethod
    def create(
        cls, env: Environment, task: Task, on_score: ScoreSink | None = None
    ) -> EpisodeTools:
        """A fresh episode, built on the thread that will run its calls."""
        worker = Pinned()
        return cls(worker.call(env.episode, task), on_score, worker)

    async def call(self, name: str, arguments: Any) -> dict[str, Any]:
        async with self._lock:
            was_done = self.ep.done
            result = await self._worker.run(self.ep.call, name, arguments)
            if self.ep.done and not was_done:
                score = await self._worker.run(self.ep.score)
                self.final = {
                    "env": self.ep.env.id,
                    "task": self.ep.task.as_dict(),
                    "stop_reason": self.ep.stop_reason,
                    **score.as_dict(),
                }
                result = {**result, "score": score.as_dict()}
                if self.on_score:
                    self.on_score(self.final)
            return result


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


def build_server(tools: EpisodeTools, name: str) -> Any:
    """An MCPServer whose catalogue is the episode's tool specs, schemas as declared."""
    from mcp.server.mcpserver import MCPServer

    class EpisodeServer(MCPServer):  # type: ignore[misc]
        async def list_tools(self) -> list[Any]:
            return mcp_tools(tools.ep.tool_specs)

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            return tool_result(await tools.call(name, arguments))

    return EpisodeServer(name, instructions=instructions_of(tools.ep), log_level="WARNING")


def log_score(final: dict[str, Any]) -> None:
    print(json.dumps({"event": "score", **final}, sort_keys=True), file=sys.stderr, flush=True)


def serve_stdio(env: Environment, task: Task) -> None:
    server = build_server(EpisodeTools.create(env, task, log_score), f"datagauntlet-{env.id}")
    server.run("stdio")


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def transport_security(extra_hosts: Sequence[str] = ()) -> Any:
    """Host/Origin checks (DNS-rebinding protection): loopback names, plus `extra_hosts`.

    A page in the user's browser can reach 127.0.0.1 under a name it controls, or send its
    own Origin; without this it could play, or end, the user's episode.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    names = [*LOOPBACK_HOSTS, *extra_hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for name in names for h in (name, f"{name}:*")],
        allowed_origins=[
            o
            for name in names
            for scheme in ("http", "https")
            for o in (f"{scheme}://{name}", f"{scheme}://{name}:*")
        ],
    )


def serve_http(
    env: Environment,
    task: Task,
    host: str,
    port: int,
    announce: Callable[[str], None],
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Streamable HTTP at http://host:port/mcp; `announce` gets the URL once it is bound.
    Only loopback Host/Origin headers are answered, plus the names in `allowed_hosts`."""
    import uvicorn

    from datagauntlet.frontdoors.http_json import listen_error

    server = build_server(EpisodeTools.create(env, task, log_score), f"datagauntlet-{env.id}")
    app = server.streamable_http_app(
        json_response=True, transport_security=transport_security(allowed_hosts), host=host
    )
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
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    asyncio.run(uv.serve(sockets=[sock]))
