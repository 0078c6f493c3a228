"""OpenEnv's environment API for every registered env, under `/openenv/{env}`.

OpenEnv's own client (`openenv-core`) connects to `{base}/ws` and sends `reset`, `step`,
`state` and `close` messages; the HTTP routes `health`, `metadata`, `schema`, `state`,
`reset` and `step` answer as OpenEnv's server does. Here:

- `reset(task=N | seed=N, split="eval", config={...})` starts task N of the split (a new
  session; the previous one of the connection is closed). The observation holds the prompts and
  the tool specs, and `session_id` (OpenEnv's `episode_id`).
- An action is `{"tool": NAME, "arguments": {...} or raw JSON text}`, or `{"text": ...}` for
  an env that reads a final answer. The observation holds the tool's `result`.
- `reward` stays None until the step that ends the episode, which carries the final reward
  (and the components in the observation's `score`): no figure from the hidden state leaks
  before the end.
"""

from __future__ import annotations

import contextlib
from typing import Any

from datagauntlet import __version__
from datagauntlet.frontdoors.server.protocol import BadRequest, object_with
from datagauntlet.frontdoors.server.replies import json_reply as _json
from datagauntlet.frontdoors.server.replies import read_body
from datagauntlet.frontdoors.server.sessions import (
    LimitReached,
    Session,
    SessionStore,
    UnknownSession,
)

RESET_FIELDS: dict[str, tuple[type, ...]] = {
    "task": (int,),
    "seed": (int,),
    "split": (str,),
    "config": (dict,),
    "episode_id": (str,),
}
ACTION_FIELDS: dict[str, tuple[type, ...]] = {
    "tool": (str,),
    "arguments": (dict, str, list),
    "text": (str,),
    "metadata": (dict,),
}

ACTION_SCHEMA = {
    "type": "object",
    "description": "a tool call, or the final answer of an env that reads one",
    "properties": {
        "tool": {"type": "string", "description": "a tool name from the observation's tools"},
        "arguments": {"description": "the tool's arguments: an object, or raw JSON text"},
        "text": {"type": "string", "description": "the final answer (instead of tool)"},
    },
}
OBSERVATION_SCHEMA = {
    "type": "object",
    "properties": {
        "session_id": {"type": "string"},
        "system_prompt": {"type": "string"},
        "prompt": {"type": "string"},
        "tools": {"type": "array", "description": "OpenAI function-calling specs"},
        "result": {"type": "object", "description": "the last tool call's result"},
        "score": {"type": "object", "description": "components and metrics, once done"},
    },
}
STATE_SCHEMA = {
    "type": "object",
    "properties": {
        "episode_id": {"type": "string"},
        "step_count": {"type": "integer"},
        "done": {"type": "boolean"},
    },
}


def _opening(session: Session) -> dict[str, Any]:
    opening = session.opening()
    return {
        "observation": {**opening, "result": None},
        "reward": None,
        "done": False,
    }


def _state(session: Session | None) -> dict[str, Any]:
    if session is None:
        return {"episode_id": None, "step_count": 0, "done": False}
    return {
        "episode_id": session.id,
        "step_count": session.calls,
        "done": session.live.done,
        "env": session.env.id,
        "task": session.live.ep.task.as_dict(),
    }


async def _reset(store: SessionStore, env_id: str, data: Any) -> Session:
    req = object_with(data or {}, RESET_FIELDS, "reset")
    index = req.get("task", req.get("seed", 0)) or 0
    try:
        return await store.create(
            env_id, req.get("config") or {}, req.get("split") or "eval", index
        )
    except LimitReached as exc:
        raise BadRequest(429, str(exc)) from None
    except ValueError as exc:
        raise BadRequest(400, str(exc)) from None


async def _step(session: Session, data: Any) -> dict[str, Any]:
    action = object_with(data, ACTION_FIELDS, "an action")
    if "text" in action:
        step = await session.live.answer(action["text"])
        if step is None:
            raise BadRequest(400, f"{session.env.id} reads no final answer; send a tool call")
        name = None
    elif action.get("tool"):
        name = action["tool"]
        step = await session.live.call(name, action.get("arguments"))
    else:
        raise BadRequest(400, 'an action is {"tool": NAME, "arguments": {...}} or {"text": ...}')
    reply = session.record(step)
    observation = {"session_id": session.id, "tool": name, "result": reply["result"]}
    reward = None
    if "score" in reply:
        observation["score"] = reply["score"]
        reward = reply["score"]["reward"]
    return {"observation": observation, "reward": reward, "done": reply["done"]}


STEP_FIELDS: dict[str, tuple[type, ...]] = {
    "action": (dict,),
    "episode_id": (str,),
    "timeout_s": (int, float),
    "request_id": (str,),
}


def routes(store: SessionStore) -> list[Any]:
    """OpenEnv's HTTP routes and its WebSocket under `/openenv/{env}`."""
    return _OpenEnvRoutes(store).routes()


class _OpenEnvRoutes:
    """The handlers of OpenEnv's routes over one worker's session store."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store

    def routes(self) -> list[Any]:
        from starlette.routing import Route, WebSocketRoute

        base = "/openenv/{env}"
        return [
            Route(f"{base}/health", self.health, methods=["GET"]),
            Route(f"{base}/metadata", self.metadata, methods=["GET"]),
            Route(f"{base}/schema", self.schema, methods=["GET"]),
            Route(f"{base}/state", self.state, methods=["GET"]),
            Route(f"{base}/reset", self.reset, methods=["POST"]),
            Route(f"{base}/step", self.step, methods=["POST"]),
            WebSocketRoute(f"{base}/ws", self.ws),
        ]

    @staticmethod
    def env_of(request: Any) -> str:
        from datagauntlet.core.registry import env_class

        env_id = request.path_params["env"]
        try:
            env_class(env_id)
        except ValueError as exc:
            raise BadRequest(404, str(exc)) from None
        return env_id

    async def health(self, request: Any) -> Any:
        self.env_of(request)
        return _json({"status": "healthy"})

    async def metadata(self, request: Any) -> Any:
        from datagauntlet.core.registry import env_class

        cls = env_class(self.env_of(request))
        doc = (cls.__doc__ or "").strip().splitlines()
        return _json(
            {
                "name": cls.id,
                "description": doc[0] if doc else cls.id,
                "version": __version__,
                "readme_content": None,
                "author": "datagauntlet",
                "documentation_url": None,
            }
        )

    async def schema(self, request: Any) -> Any:
        self.env_of(request)
        return _json(
            {"action": ACTION_SCHEMA, "observation": OBSERVATION_SCHEMA, "state": STATE_SCHEMA}
        )

    async def state(self, request: Any) -> Any:
        self.env_of(request)
        sid = request.query_params.get("episode_id") or request.query_params.get("session_id")
        if not sid:
            return _json(_state(None))
        try:
            return _json(_state(self.store.get(sid)))
        except UnknownSession:
            raise BadRequest(404, "no such episode_id") from None

    async def reset(self, request: Any) -> Any:
        env_id = self.env_of(request)
        body = await read_body(request, self.store.limits.max_body_bytes)
        return _json(_opening(await _reset(self.store, env_id, body)))

    async def step(self, request: Any) -> Any:
        self.env_of(request)
        body = await read_body(request, self.store.limits.max_body_bytes)
        body = object_with(body, STEP_FIELDS, "a step")
        action = dict(object_with(body.get("action") or {}, ACTION_FIELDS, "an action"))
        meta = object_with(action.pop("metadata", None) or {}, {"episode_id": (str,)}, "metadata")
        sid = body.get("episode_id") or meta.get("episode_id")
        if not sid:
            raise BadRequest(400, "HTTP step needs episode_id (from reset); or use /ws")
        try:
            session = self.store.get(sid)
        except UnknownSession:
            raise BadRequest(404, "no such episode_id") from None
        return _json(await _step(session, action))

    async def ws(self, websocket: Any) -> None:
        await openenv_ws(self.store, websocket)


async def openenv_ws(store: SessionStore, websocket: Any) -> None:
    from starlette.websockets import WebSocketDisconnect

    from datagauntlet.core.registry import env_class
    from datagauntlet.frontdoors.server.protocol import parse_json

    await websocket.accept()
    env_id = websocket.path_params["env"]
    session: Session | None = None
    try:
        env_class(env_id)
    except ValueError as exc:
        await websocket.send_json(
            {"type": "error", "data": {"message": str(exc), "code": "UNKNOWN_ENV"}}
        )
        await websocket.close(code=4404)
        return
    try:
        while True:
            message = await websocket.receive()
            if message["type"] != "websocket.receive":
                break  # websocket.disconnect
            # A text frame or a binary one holding the same UTF-8 JSON, as on the session routes.
            text = message.get("text")
            raw = text.encode() if text is not None else message.get("bytes") or b""
            try:
                msg = parse_json(raw, store.limits.max_message_bytes)
                if not isinstance(msg, dict):
                    raise BadRequest(400, "a message is an object with a type")
                kind = msg.get("type")
                if kind == "reset":
                    if session is not None:
                        with contextlib.suppress(UnknownSession):
                            await store.close(session.id)
                    session = await _reset(store, env_id, msg.get("data"))
                    reply = {"type": "observation", "data": _opening(session)}
                elif kind == "step":
                    if session is None:
                        raise BadRequest(400, "step before reset: send reset first")
                    session.touch()
                    reply = {"type": "observation", "data": await _step(session, msg.get("data"))}
                elif kind == "state":
                    reply = {"type": "state", "data": _state(session)}
                elif kind == "close":
                    break
                else:
                    raise BadRequest(
                        400, f"unknown message type {kind!r}: reset, step, state or close"
                    )
            except BadRequest as exc:
                code = "CAPACITY_REACHED" if exc.status == 429 else "INVALID_REQUEST"
                reply = {"type": "error", "data": {"message": exc.message, "code": code}}
            await websocket.send_json(reply)
    except WebSocketDisconnect:
        pass
    finally:
        if session is not None:
            with contextlib.suppress(UnknownSession):
                await store.close(session.id)
