"""The session server's JSON routes over HTTP: health, envs, and a session's whole life (open,
list, describe, call, answer, score, close). Each handler answers JSON or raises `BadRequest`,
which the app turns into a JSON error."""

from __future__ import annotations

import logging
from typing import Any

from datagauntlet.frontdoors.server.forward import Peers
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


class SessionRoutes:
    """The handlers of one worker's routes, over its session store (and, with several workers,
    its peers for `GET /sessions`)."""

    def __init__(self, store: SessionStore, peers: Peers | None = None) -> None:
        self.store = store
        self.peers = peers
        self.limits = store.limits

    def routes(self) -> list[Any]:
        from starlette.routing import Route

        from datagauntlet.frontdoors.server import mcp_mount

        methods = ["GET", "POST", "DELETE"]
        return [
            Route("/health", self.health, methods=["GET"]),
            Route("/envs", self.envs, methods=["GET"]),
            Route("/sessions", self.create, methods=["POST"]),
            Route("/sessions", self.list_sessions, methods=["GET"]),
            Route("/sessions/{sid}", self.get_session, methods=["GET"]),
            Route("/sessions/{sid}", self.delete, methods=["DELETE"]),
            Route("/sessions/{sid}/call", self.call, methods=["POST"]),
            Route("/sessions/{sid}/answer", self.answer, methods=["POST"]),
            Route("/sessions/{sid}/score", self.score, methods=["GET"]),
            Route("/sessions/{sid}/mcp", mcp_mount.MCPEndpoint(self.store), methods=methods),
        ]

    def session_of(self, request: Any) -> Any:
        try:
            return self.store.get(request.path_params["sid"])
        except UnknownSession:
            raise BadRequest(
                404, "no such session (closed, reaped after idling, or never made)"
            ) from None

    async def health(self, request: Any) -> Any:
        tally = self.store.tally  # every worker's counts, read here without asking them
        workers = tally.rows()
        return _json(
            {
                "status": "ok" if all(w["ready"] for w in workers) else "degraded",
                "sessions": tally.total("open"),
                "created": tally.total("created"),
                "reaped": tally.total("reaped"),
                "world_bytes": tally.total("world_bytes"),
                "limits": self.limits.as_dict(),
                "worker": tally.index,
                "workers": workers,
            }
        )

    async def envs(self, request: Any) -> Any:
        from datagauntlet.core.registry import list_envs

        return _json({"envs": list_envs()})

    async def create(self, request: Any) -> Any:
        env_id, config, split, task = session_request(
            await read_body(request, self.limits.max_body_bytes)
        )
        try:
            session = await self.store.create(env_id, config, split, task)
        except LimitReached as exc:
            raise BadRequest(429, str(exc)) from None
        except ValueError as exc:
            raise BadRequest(400, str(exc)) from None
        return _json(session.opening(), 201)

    async def list_sessions(self, request: Any) -> Any:
        listed = [s.describe() for s in self.store.list()]
        peers = self.peers
        if peers is not None and not peers.is_hop(request.scope):
            for worker in range(len(peers.paths)):
                if worker != peers.index:
                    try:
                        listed += (await peers.get_json(worker, "/sessions"))["sessions"]
                    except Exception as exc:  # a worker down: list what the others hold
                        logger.warning("worker %d did not list its sessions: %s", worker, exc)
        return _json({"sessions": listed})

    async def get_session(self, request: Any) -> Any:
        return _json(self.session_of(request).describe())

    async def call(self, request: Any) -> Any:
        session = self.session_of(request)
        body = object_with(
            await read_body(request, self.limits.max_body_bytes), CALL_FIELDS, "a call"
        )
        if "name" not in body:
            raise BadRequest(400, "a call needs name (a tool from the session's tools)")
        step = await session.live.call(body["name"], body.get("arguments"))
        return _json(session.record(step))

    async def answer(self, request: Any) -> Any:
        session = self.session_of(request)
        body = object_with(
            await read_body(request, self.limits.max_body_bytes), ANSWER_FIELDS, "an answer"
        )
        if not session.live.reads_final_answer:
            raise BadRequest(400, f"{session.env.id} reads no final answer; use its tools")
        step = await session.live.answer(body.get("text") or "")
        return _json(session.record(step))

    async def score(self, request: Any) -> Any:
        session = self.session_of(request)
        if not session.live.done:
            raise BadRequest(409, "the episode is not over; the score is given when it ends")
        return _json(session.final or (await session.live.score()).as_dict())

    async def delete(self, request: Any) -> Any:
        sid = request.path_params["sid"]
        try:
            session = await self.store.close(sid)
        except UnknownSession:
            raise BadRequest(404, "no such session") from None
        return _json(
            {"session_id": sid, "closed": True, "done": session.live.done, "score": session.final}
        )
