"""WebSocket stepping on raw ASGI: the server's hot path, one reply per message.

Two routes, one message vocabulary:

- `WS /sessions/{id}/ws` steps a session made with `POST /sessions`; dropping the connection
  leaves the session open (it is closed by `{"op": "close"}`, `DELETE` or the idle reaper).
- `WS /ws` needs no HTTP request per episode: `{"op": "open", "env", "config"?, "split"?,
  "task"?}` makes a session bound to this connection and answers what `POST /sessions` does;
  the same messages then step it; after `{"op": "close"}` the next `open` starts the next task
  on the same connection. A session opened here is closed when its connection drops.

Messages: `{"name", "arguments"}` (a call), `{"text"}` (an answer), `{"op": "score"}`,
`{"op": "close"}`; every reply is one JSON text, errors as `{"error", "status"}`.

These routes bypass the framework: per message, the work is parse, step, encode. Nothing in a
message can make them raise; a bug in the server answers that one message with a JSON 500.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from datagauntlet.core.secret import scrub_seeds
from datagauntlet.frontdoors.server.protocol import (
    ANSWER_FIELDS,
    CALL_FIELDS,
    BadRequest,
    dumps,
    object_with,
    parse_json,
    session_request,
)
from datagauntlet.frontdoors.server.sessions import (
    LimitReached,
    Session,
    SessionStore,
    UnknownSession,
)

logger = logging.getLogger("datagauntlet.server")
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

NOT_OVER = "the episode is not over; the score is given when it ends"
NO_SESSION = 'no session on this connection; send {"op": "open", "env": ...} first'
SHAPES = 'a message is {"name", "arguments"}, {"text"} or {"op": "score"|"close"}'


def worker_header(index: int) -> list[tuple[bytes, bytes]]:
    """Which worker took a connection: handshake replies say it (a client or test can tell a
    connection it relays from one it serves)."""
    return [(b"x-datagauntlet-worker", b"%d" % index)]


def session_id_of(path: str) -> str | None:
    """The id in `/sessions/{id}/ws`, or None when the path is not that route."""
    if path.startswith("/sessions/") and path.endswith("/ws"):
        sid = path[10:-3]
        if sid and "/" not in sid:
            return sid
    return None


async def serve(scope: dict[str, Any], receive: Receive, send: Send, store: SessionStore) -> None:
    if (await receive())["type"] != "websocket.connect":
        return
    path = scope["path"]
    sid = session_id_of(path)
    await send({"type": "websocket.accept", "headers": worker_header(store.tally.index)})
    if sid is None:
        await _chained(receive, send, store)
        return
    try:
        session = store.get(sid)
    except UnknownSession:
        await send({"type": "websocket.send", "text": dumps(_error(404, "no such session"))})
        await send({"type": "websocket.close", "code": 4404})
        return
    await _loop(receive, send, store, lambda: session, None)


async def _chained(receive: Receive, send: Send, store: SessionStore) -> None:
    bound: list[Session] = []

    async def open_session(msg: dict[str, Any]) -> dict[str, Any]:
        if bound and bound[0].id in store:
            raise BadRequest(409, f"this connection has session {bound[0].id} open; close it")
        env_id, config, split, task = session_request({k: v for k, v in msg.items() if k != "op"})
        try:
            session = await store.create(env_id, config, split, task)
        except LimitReached as exc:
            raise BadRequest(429, str(exc)) from None
        except ValueError as exc:
            raise BadRequest(400, str(exc)) from None
        bound[:] = [session]
        return session.opening()

    def current() -> Session:
        if not bound or bound[0].id not in store:
            raise BadRequest(409, NO_SESSION)
        return bound[0]

    try:
        await _loop(receive, send, store, current, open_session)
    finally:
        if bound:
            with contextlib.suppress(UnknownSession):
                await store.close(bound[0].id)


async def _loop(
    receive: Receive,
    send: Send,
    store: SessionStore,
    current: Callable[[], Session],
    open_session: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None,
) -> None:
    limit = store.limits.max_message_bytes
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return  # websocket.disconnect
        raw = message.get("text")
        if raw is None:
            raw = message.get("bytes") or b""
        try:
            reply = await _reply(store, current, open_session, parse_json(raw, limit))
        except BadRequest as exc:
            reply = _error(exc.status, exc.message)
        except Exception as exc:  # a bug must not end 255 other sessions' connection too
            text = scrub_seeds(str(exc))
            logger.error("internal error on a WebSocket message: %s: %s", type(exc).__name__, text)
            reply = _error(500, f"internal error: {type(exc).__name__}")
        await send({"type": "websocket.send", "text": dumps(reply)})
        if reply.get("closed") and open_session is None:
            await send({"type": "websocket.close", "code": 1000})
            return


async def _reply(
    store: SessionStore,
    current: Callable[[], Session],
    open_session: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None,
    msg: Any,
) -> dict[str, Any]:
    if isinstance(msg, dict) and "op" in msg:
        op = msg["op"]
        if op == "open" and open_session is not None:
            return await open_session(msg)
        if op not in ("score", "close") or len(msg) != 1:
            raise BadRequest(400, SHAPES + (', {"op": "open", ...}' if open_session else ""))
        session = current()
        if op == "close":
            with contextlib.suppress(UnknownSession):
                await store.close(session.id)
            return {"closed": True, "score": session.final}
        if not session.live.done:
            return _error(409, NOT_OVER)
        return {"score": session.final or (await session.live.score()).as_dict()}
    if isinstance(msg, dict) and "text" in msg:
        body = object_with(msg, ANSWER_FIELDS, "an answer")
        session = current()
        session.touch()
        step = await session.live.answer(body["text"])
        if step is None:
            raise BadRequest(400, f"{session.env.id} reads no final answer; use its tools")
        return session.record(step)
    body = object_with(msg, CALL_FIELDS, "a message")
    if "name" not in body:
        raise BadRequest(400, SHAPES)
    session = current()
    session.touch()
    return session.record(await session.live.call(body["name"], body.get("arguments")))


def _error(status: int, message: str) -> dict[str, Any]:
    return {"error": message, "status": status}
