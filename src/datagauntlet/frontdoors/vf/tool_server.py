"""One MCP server per process serving the tools of every live world at `/w/<key>/mcp`.

It runs in a daemon thread with its own event loop, so tool calls never wait on the
evaluator's loop (nor the other way round). The world's key is read from the path by a thin
ASGI wrapper and handed to the MCP handlers through a context variable; an unknown or freed
key gets no tools and a refusal, never another rollout's world.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import re
import socket
import threading
from typing import Any

from datagauntlet.frontdoors.mcp_server import mcp_tools, meta_of, raw_arguments, tool_result
from datagauntlet.frontdoors.origin_guard import Guard, GuardedApp
from datagauntlet.frontdoors.vf.worlds import WORLDS, WorldEntry, WorldRegistry

_world_key: contextvars.ContextVar[str | None] = contextvars.ContextVar("dg_world", default=None)

PREFIX = "/w/"
# What a rollout's toolset points at outside a rollout (verifiers' pre-checks): no server.
NO_WORLD_URL = "http://127.0.0.1:9/w/-/mcp"
_KEY_IN_URL = re.compile(re.escape(PREFIX) + r"[A-Za-z0-9_-]{16,}(?=/mcp)")


class RedactWorldKeys(logging.Filter):
    """verifiers logs every tool server's URL, and a world's URL holds its key: log the
    URL with the key blanked out."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, str) for a in record.args):
            record.args = tuple(_redact(a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = _redact(record.msg)
        return True


def _redact(text: str) -> str:
    return _KEY_IN_URL.sub(PREFIX + "<key>", text)


def redact_world_keys_in(logger_name: str) -> None:
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, RedactWorldKeys) for f in logger.filters):
        logger.addFilter(RedactWorldKeys())


NO_WORLD = {"error": "no such episode (finished, or never started)"}


async def call_world(
    registry: WorldRegistry, key: str | None, name: Any, arguments: Any
) -> dict[str, Any]:
    """A tool call on the world under `key`, arguments as the model wrote them."""
    world = registry.get(key) if key else None
    if world is None:
        return dict(NO_WORLD)
    return (await world.live.call(name, arguments)).result


def world_tools(world: WorldEntry | None) -> list[Any]:
    """The world's MCP tool list, built once: the SDK lists the tools again for every
    tools/call, to check the call's Mcp-Param headers against the tool's schema."""
    if world is None:
        return []
    if world.mcp_tools is None:
        world.mcp_tools = mcp_tools(world.live.tool_specs)
    return world.mcp_tools


def build_app(registry: WorldRegistry) -> Any:
    from mcp.server.mcpserver import MCPServer

    from datagauntlet.frontdoors.mcp_server import unguarded

    class WorldsServer(MCPServer):  # type: ignore[misc]
        async def list_tools(self) -> list[Any]:
            key = _world_key.get()
            return world_tools(registry.get(key) if key else None)

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            key = _world_key.get()
            args = raw_arguments(meta_of(context), arguments)
            return tool_result(await call_world(registry, key, name, args))

    server = WorldsServer("datagauntlet", log_level="WARNING")
    inner = server.streamable_http_app(
        json_response=True,
        stateless_http=True,
        transport_security=unguarded(),  # the shared guard wraps the app (ToolServer)
    )

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        path: str = scope.get("path", "")
        key, sep, rest = path.removeprefix(PREFIX).partition("/")
        if not path.startswith(PREFIX) or not sep or rest.rstrip("/") != "mcp":
            body = json.dumps({"error": "not found"}).encode()
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"application/json")]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return
        token = _world_key.set(key)
        try:
            await inner({**scope, "path": "/mcp", "raw_path": b"/mcp"}, receive, send)
        finally:
            _world_key.reset(token)

    return app


class ToolServer:
    """The process's server; `url_for(key)` is what a rollout's toolset points at."""

    def __init__(self, registry: WorldRegistry = WORLDS, host: str = "127.0.0.1") -> None:
        import uvicorn

        redact_world_keys_in("verifiers.v1.mcp.launch")  # "tool server '': <url>" per rollout

        self.registry = registry
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # uvicorn leaves Nagle on for sockets it is handed: a reply written in two parts would
        # wait ~40 ms for the client's delayed ACK on every tool call.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, 0))
        self._sock = sock
        self.base = f"http://{host}:{sock.getsockname()[1]}"
        # A world's key is a secret in its URL; the guard also keeps pages out (origin_guard.py).
        app = GuardedApp(build_app(registry), Guard())
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="datagauntlet-tools", daemon=True)
        self._thread.start()
        while not self._server.started and self._thread.is_alive():
            self._thread.join(0.01)
        if not self._server.started:
            raise RuntimeError("the datagauntlet tool server did not start")

    def _run(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._sock]))

    def url_for(self, key: str) -> str:
        return f"{self.base}{PREFIX}{key}/mcp"

    def key_of(self, url: str) -> str | None:
        """The world key in a URL made by `url_for`; None for any other URL."""
        head = f"{self.base}{PREFIX}"
        if not url.startswith(head) or not url.endswith("/mcp"):
            return None
        key = url[len(head) : -len("/mcp")]
        return key if key and "/" not in key else None

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


_server: ToolServer | None = None
_server_lock = threading.Lock()


def running_tool_server() -> ToolServer | None:
    """The process's tool server if it has been started, without starting it."""
    with _server_lock:
        return _server


def tool_server() -> ToolServer:
    """The process's tool server, started on first use."""
    global _server
    with _server_lock:
        if _server is None:
            _server = ToolServer()
        return _server
