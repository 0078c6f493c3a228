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

Every reply is JSON, errors included; no request can make it answer a traceback.

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

from datagauntlet.frontdoors.origin_guard import Guard, asgi_refusal, refuse_asgi
from datagauntlet.frontdoors.server import ws
from datagauntlet.frontdoors.server.forward import Peers, send_json
from datagauntlet.frontdoors.server.protocol import (
    ANSWER_FIELDS,
    CALL_FIELDS,
    BadRequest,
    object_with,
    session_request,
)
from datagauntlet.frontdoors.server.replies import json_reply as _json
from datagauntlet.frontdoors.server.replies import read_body
from datagauntlet.frontdoors.server.sessions import LimitReached, SessionStore, UnknownSession

logger = logging.getLogger("datagauntlet.server")


def _error(status: int, message: str) -> Any:
    return _json({"error": message, "status": status}, status)


def _step_reply(session: Any, step: Any) -> dict[str, Any]:
    return session.record(step)


def build_app(
    store: SessionStore,
    allowed_hosts: list[str] | None = None,
    peers: Peers | None = None,
    allowed_origins: list[str] | None = None,
) -> Any:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.routing import Route

    from datagauntlet.core.registry import list_envs
    from datagauntlet.frontdoors.server import mcp_mount, openenv_api

    limits = store.limits

    def session_of(request: Any) -> Any:
        try:
            return store.get(request.path_params["sid"])
        except UnknownSession:
            raise BadRequest(
                404, "no such session (closed, reaped after idling, or never made)"
            ) from None

    async def health(request: Any) -> Any:
        tally = store.tally  # every worker's counts, read here without asking them
        workers = tally.rows()
        return _json(
            {
                "status": "ok" if all(w["ready"] for w in workers) else "degraded",
                "sessions": tally.total("open"),
                "created": tally.total("created"),
                "reaped": tally.total("reaped"),
                "world_bytes": tally.total("world_bytes"),
                "limits": limits.as_dict(),
                "worker": tally.index,
                "workers": workers,
            }
        )

    async def envs(request: Any) -> Any:
        return _json({"envs": list_envs()})

    async def create(request: Any) -> Any:
        env_id, config, split, task = session_request(
            await read_body(request, limits.max_body_bytes)
        )
        try:
            session = await store.create(env_id, config, split, task)
        except LimitReached as exc:
            raise BadRequest(429, str(exc)) from None
        except ValueError as exc:
            raise BadRequest(400, str(exc)) from None
        return _json(session.opening(), 201)

    async def list_sessions(request: Any) -> Any:
        listed = [s.describe() for s in store.list()]
        if peers is not None and not peers.is_hop(request.scope):
            for worker in range(len(peers.paths)):
                if worker != peers.index:
                    try:
                        listed += (await peers.get_json(worker, "/sessions"))["sessions"]
                    except Exception as exc:  # a worker down: list what the others hold
                        logger.warning("worker %d did not list its sessions: %s", worker, exc)
        return _json({"sessions": listed})

    async def get_session(request: Any) -> Any:
        return _json(session_of(request).describe())

    async def call(request: Any) -> Any:
        session = session_of(request)
        body = object_with(await read_body(request, limits.max_body_bytes), CALL_FIELDS, "a call")
        if "name" not in body:
            raise BadRequest(400, "a call needs name (a tool from the session's tools)")
        step = await session.live.call(body["name"], body.get("arguments"))
        return _json(_step_reply(session, step))

    async def answer(request: Any) -> Any:
        session = session_of(request)
        body = object_with(
            await read_body(request, limits.max_body_bytes), ANSWER_FIELDS, "an answer"
        )
        if not session.live.reads_final_answer:
            raise BadRequest(400, f"{session.env.id} reads no final answer; use its tools")
        step = await session.live.answer(body.get("text") or "")
        return _json(_step_reply(session, step))

    async def score(request: Any) -> Any:
        session = session_of(request)
        if not session.live.done:
            raise BadRequest(409, "the episode is not over; the score is given when it ends")
        return _json(session.final or (await session.live.score()).as_dict())

    async def delete(request: Any) -> Any:
        sid = request.path_params["sid"]
        try:
            session = await store.close(sid)
        except UnknownSession:
            raise BadRequest(404, "no such session") from None
        return _json(
            {"session_id": sid, "closed": True, "done": session.live.done, "score": session.final}
        )

    async def not_found(request: Any, exc: Any) -> Any:
        status = getattr(exc, "status_code", 404)
        if status == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(
            status,
            f"no route {request.method} {request.url.path}; see GET /health, "
            "GET /envs, POST /sessions, /sessions/ID/{call,answer,score,ws,mcp}",
        )

    async def bad_request(request: Any, exc: BadRequest) -> Any:
        return _error(exc.status, exc.message)

    async def crashed(request: Any, exc: Exception) -> Any:
        logger.error(
            "internal error on %s %s: %s: %s",
            request.method,
            request.url.path,
            type(exc).__name__,
            exc,
        )
        return _error(500, f"internal error: {type(exc).__name__}")

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

    methods = ["GET", "POST", "DELETE"]
    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/envs", envs, methods=["GET"]),
        Route("/sessions", create, methods=["POST"]),
        Route("/sessions", list_sessions, methods=["GET"]),
        Route("/sessions/{sid}", get_session, methods=["GET"]),
        Route("/sessions/{sid}", delete, methods=["DELETE"]),
        Route("/sessions/{sid}/call", call, methods=["POST"]),
        Route("/sessions/{sid}/answer", answer, methods=["POST"]),
        Route("/sessions/{sid}/score", score, methods=["GET"]),
        Route("/sessions/{sid}/mcp", mcp_mount.MCPEndpoint(store), methods=methods),
        *openenv_api.routes(store),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: not_found, BadRequest: bad_request, Exception: crashed},
        lifespan=lifespan,
    )
    return Front(app, store, Guard(allowed_hosts or (), allowed_origins or ()), peers)


class Front:
    """The outermost ASGI layer: the origin guard (origin_guard.py: Host, Origin and
    Content-Type, a JSON 403/415 over HTTP, a refused handshake over WebSocket; a request a
    worker passes on was checked where it arrived), then a request for another worker's session
    passed to it (forward.py), then WebSocket stepping on raw ASGI (ws.py), then the framework
    for everything else."""

    def __init__(
        self, app: Any, store: SessionStore, guard: Guard, peers: Peers | None = None
    ) -> None:
        self.app = app
        self.store = store
        self.guard = guard
        self.peers = peers

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        peers = self.peers
        hop = peers is not None and kind != "lifespan" and peers.is_hop(scope)
        if not hop:
            refused = asgi_refusal(self.guard, scope)
            if refused is not None:
                await refuse_asgi(scope, receive, send, refused)
                return
        if kind == "websocket":
            if peers is not None and not hop:
                owner = peers.route(scope)
                if owner is not None:
                    self.store.tally.passed_on()
                    await peers.relay_ws(owner, scope, receive, send)
                    return
            path = scope["path"]
            if path == "/ws" or ws.session_id_of(path) is not None:
                await ws.serve(scope, receive, send, self.store)
                return
        if kind == "http" and await self._passed_on(scope, receive, send):
            return
        await self.app(scope, receive, send)

    async def _passed_on(self, scope: dict[str, Any], receive: Any, send: Any) -> bool:
        """Pass a request for another worker's session to that worker (True when done)."""
        peers = self.peers
        if peers is None or peers.is_hop(scope):
            return False
        owner = peers.route(scope)
        if owner is None and not peers.needs_body(scope):
            return False
        try:
            body = await peers.read_body(scope, receive)
        except BadRequest as exc:
            await send_json(send, exc.status, exc.message)
            return True
        if owner is None:
            owner = peers.route_body(body)
        if owner is None:  # ours after all: the app reads the body already read
            replayed = [{"type": "http.request", "body": body, "more_body": False}]

            async def replay() -> dict[str, Any]:
                return replayed.pop() if replayed else await receive()

            await self.app(scope, replay, send)
            return True
        self.store.tally.passed_on()
        await peers.forward_http(owner, scope, receive, send, body)
        return True


async def _reap_forever(store: SessionStore) -> None:
    period = max(0.05, min(30.0, store.limits.idle_seconds / 4))
    while True:
        await asyncio.sleep(period)
        try:
            await store.reap()
        except Exception as exc:  # one bad close must not stop reaping
            logger.error("reaping failed: %s: %s", type(exc).__name__, exc)
