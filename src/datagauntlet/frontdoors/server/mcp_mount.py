"""Each session's tools over MCP (streamable HTTP) at `/sessions/{id}/mcp`.

The MCP server of a session is the one the `mcp` door builds for its single episode, so both
answer alike; it is made the first time a client reaches it and stopped when the session
closes. The server's front has checked Host, Origin and Content-Type (origin_guard.py)
before a request gets here, so the SDK's own copy of that check is off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from datagauntlet.frontdoors.server.sessions import Session, SessionStore, UnknownSession

EXTRA = "mcp"


class SessionMCP:
    """A session's MCP server and its session manager's task group, run in the background."""

    def __init__(self, session: Session) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from datagauntlet.frontdoors.mcp_server import EpisodeTools, build_server, unguarded

        self.tools = EpisodeTools(session.live)
        server = build_server(self.tools, f"datagauntlet-{session.env.id}")
        self.manager = StreamableHTTPSessionManager(
            app=server._lowlevel_server, json_response=True, security_settings=unguarded()
        )
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async with self.manager.run():
            self._ready.set()
            await self._stop.wait()

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
        await self._ready.wait()
        await self.manager.handle_request(scope, receive, send)

    async def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(self._task, 10)


class MCPEndpoint:
    """An ASGI app routing `/sessions/{sid}/mcp` to that session's MCP server."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        sid = scope.get("path_params", {}).get("sid", "")
        try:
            session = self.store.get(sid)
        except UnknownSession:
            await _json(send, 404, {"error": "no such session", "status": 404})
            return
        mcp = session.extras.get(EXTRA)
        if mcp is None:
            mcp = session.extras[EXTRA] = SessionMCP(session)
        await mcp.handle(scope, receive, send)


async def _json(send: Any, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
