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
| `WS /sessions/{id}/ws` | the same calls as messages, one reply each |
| `/sessions/{id}/mcp` | the session's tools over MCP (streamable HTTP) |
| `/openenv/{env}/...` | OpenEnv's API (see openenv_api.py) |

Every reply is JSON, errors included; no request can make it answer a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from datagauntlet.frontdoors.server.protocol import (
    ANSWER_FIELDS,
    CALL_FIELDS,
    BadRequest,
    object_with,
    parse_json,
    session_request,
)
from datagauntlet.frontdoors.server.sessions import LimitReached, SessionStore, UnknownSession

logger = logging.getLogger("datagauntlet.server")
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]


def _json(body: Any, status: int = 200) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse(body, status_code=status)


def _error(status: int, message: str) -> Any:
    return _json({"error": message, "status": status}, status)


async def read_body(request: Any, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise BadRequest(400, f"Content-Length must be a number of bytes, got {declared!r}")
        if int(declared) > limit:
            raise BadRequest(413, f"body of {int(declared):,} bytes is over the limit of {limit:,}")
    from starlette.requests import ClientDisconnect

    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BadRequest(413, f"body is over the limit of {limit:,} bytes")
            chunks.append(chunk)
    except ClientDisconnect:  # the client hung up mid-body: nothing to answer, nothing to log
        raise BadRequest(400, "the client closed the connection before its body ended") from None
    return parse_json(b"".join(chunks), limit)


def _step_reply(session: Any, step: Any) -> dict[str, Any]:
    return session.record(step)


def build_app(store: SessionStore, allowed_hosts: list[str] | None = None) -> Any:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.routing import Route, WebSocketRoute

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
        return _json(
            {
                "status": "ok",
                "sessions": len(store),
                "created": store.created,
                "reaped": store.reaped,
                "limits": limits.as_dict(),
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
        return _json({"sessions": [s.describe() for s in store.list()]})

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

    async def websocket(ws: Any) -> Any:
        await ws_session(store, ws)

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
        try:
            yield
        finally:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
            await store.close_all()

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
        WebSocketRoute("/sessions/{sid}/ws", websocket),
        Route("/sessions/{sid}/mcp", mcp_mount.MCPEndpoint(store, allowed_hosts), methods=methods),
        *openenv_api.routes(store),
    ]
    hosts = [*LOOPBACK_HOSTS, *(allowed_hosts or [])]
    return Starlette(
        routes=routes,
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)],
        exception_handlers={HTTPException: not_found, BadRequest: bad_request, Exception: crashed},
        lifespan=lifespan,
    )


async def _reap_forever(store: SessionStore) -> None:
    period = max(0.05, min(30.0, store.limits.idle_seconds / 4))
    while True:
        await asyncio.sleep(period)
        try:
            await store.reap()
        except Exception as exc:  # one bad close must not stop reaping
            logger.error("reaping failed: %s: %s", type(exc).__name__, exc)


async def ws_session(store: SessionStore, ws: Any) -> None:
    """Messages `{"name", "arguments"}` (a call), `{"text"}` (an answer), `{"op": "score"}` or
    `{"op": "close"}`; one JSON reply each, errors as `{"error"}`."""
    from starlette.websockets import WebSocketDisconnect

    await ws.accept()
    try:
        session = store.get(ws.path_params["sid"])
    except UnknownSession:
        await ws.send_json({"error": "no such session", "status": 404})
        await ws.close(code=4404)
        return
    limit = store.limits.max_message_bytes
    try:
        while True:
            raw = await ws.receive_text()
            try:
                reply = await _ws_reply(store, session, parse_json(raw.encode(), limit))
            except BadRequest as exc:
                reply = {"error": exc.message, "status": exc.status}
            await ws.send_json(reply)
            if reply.get("closed"):
                await ws.close()
                return
    except WebSocketDisconnect:
        return


async def _ws_reply(store: SessionStore, session: Any, msg: Any) -> dict[str, Any]:
    if isinstance(msg, dict) and msg.get("op") in ("score", "close") and len(msg) == 1:
        if msg["op"] == "close":
            with contextlib.suppress(UnknownSession):
                await store.close(session.id)
            return {"closed": True, "score": session.final}
        if not session.live.done:
            return {
                "error": "the episode is not over; the score is given when it ends",
                "status": 409,
            }
        return {"score": session.final or (await session.live.score()).as_dict()}
    session.touch()
    if isinstance(msg, dict) and "text" in msg:
        body = object_with(msg, ANSWER_FIELDS, "an answer")
        step = await session.live.answer(body["text"])
        if step is None:
            raise BadRequest(400, f"{session.env.id} reads no final answer; use its tools")
        return session.record(step)
    body = object_with(msg, CALL_FIELDS, "a message")
    if "name" not in body:
        raise BadRequest(
            400, 'a message is {"name", "arguments"}, {"text"} or {"op": "score"|"close"}'
        )
    return session.record(await session.live.call(body["name"], body.get("arguments")))
