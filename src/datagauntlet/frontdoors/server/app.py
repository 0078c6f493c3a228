"""The session server's ASGI app (Starlette): JSON over HTTP, WebSocket stepping, an MCP
endpoint per session, and OpenEnv's environment API.

| method and path | what |
|---|---|
| `GET /health` | status, open sessions, the limits |
| `GET /envs` | registered env ids |
| `POST /sessions` `{env, config?, split?, task?}` | a new session: prompts, tool specs, limits |
| `GET /sessions`, `GET /sessions/{id}` | open sessions; one session's state |
| `POST /sessions/{id}/call` `{name, arguments}` | one tool call (arguments: object or JSON text) |
| `POST /sessions/{id}/answer` `{text}` | the final answer, where the env reads one |
| `GET /sessions/{id}/score` | the score, once the episode is done (409 before) |
| `DELETE /sessions/{id}` | close it |
| `WS /sessions/{id}/ws` | the same calls as messages, one reply each (ws.py) |
| `WS /ws` | sessions opened, stepped and closed one after another on one connection (ws.py) |
| `/sessions/{id}/mcp` | the session's tools over MCP (streamable HTTP) |
| `/openenv/{env}/...` | OpenEnv's API (see openenv_api.py) |

Every reply is JSON, errors included; no request can make it answer a traceback. The JSON
routes' handlers are in session_routes.py; the layer in front of the framework (the origin
guard, passing requests on, WebSocket stepping) is front.py.

With several worker processes (workers.py) each runs this app; a request for a session another
worker holds is passed to it (forward.py), and `GET /health` and `GET /sessions` answer for the
whole server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from datagauntlet.core.secret import scrub_seeds
from datagauntlet.frontdoors.origin_guard import Guard
from datagauntlet.frontdoors.server.forward import Peers
from datagauntlet.frontdoors.server.front import Front
from datagauntlet.frontdoors.server.protocol import BadRequest
from datagauntlet.frontdoors.server.replies import json_reply as _json
from datagauntlet.frontdoors.server.session_routes import SessionRoutes
from datagauntlet.frontdoors.server.sessions import SessionStore

logger = logging.getLogger("datagauntlet.server")


def build_app(
    store: SessionStore,
    allowed_hosts: list[str] | None = None,
    peers: Peers | None = None,
    allowed_origins: list[str] | None = None,
) -> Any:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException

    from datagauntlet.frontdoors.server import openenv_api

    app = Starlette(
        routes=[*SessionRoutes(store, peers).routes(), *openenv_api.routes(store)],
        exception_handlers={
            HTTPException: _not_found,
            BadRequest: _bad_request,
            Exception: _crashed,
        },
        lifespan=_lifespan(store, peers),
    )
    return Front(app, store, Guard(allowed_hosts or (), allowed_origins or ()), peers)


def _error(status: int, message: str) -> Any:
    return _json({"error": message, "status": status}, status)


async def _not_found(request: Any, exc: Any) -> Any:
    status = getattr(exc, "status_code", 404)
    if status == 405:
        return _error(405, f"{request.method} is not allowed on {request.url.path}")
    return _error(
        status,
        f"no route {request.method} {request.url.path}; see GET /health, "
        "GET /envs, POST /sessions, /sessions/ID/{call,answer,score,ws,mcp}",
    )


async def _bad_request(request: Any, exc: BadRequest) -> Any:
    return _error(exc.status, exc.message)


async def _crashed(request: Any, exc: Exception) -> Any:
    logger.error(
        "internal error on %s %s: %s: %s",
        request.method,
        request.url.path,
        type(exc).__name__,
        scrub_seeds(str(exc)),
    )
    return _error(500, f"internal error: {type(exc).__name__}")


def _lifespan(store: SessionStore, peers: Peers | None) -> Any:
    """The worker's lifespan: reap idle sessions while it serves; close them all at the end."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        reaper = asyncio.create_task(_reap_forever(store))
        store.tally.mark_ready()
        try:
            yield
        finally:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
            await store.close_all()
            if peers is not None:
                await peers.aclose()

    return lifespan


async def _reap_forever(store: SessionStore) -> None:
    period = max(0.05, min(30.0, store.limits.idle_seconds / 4))
    while True:
        await asyncio.sleep(period)
        try:
            await store.reap()
        except Exception as exc:  # one bad close must not stop reaping
            logger.error("reaping failed: %s: %s", type(exc).__name__, scrub_seeds(str(exc)))
