"""The outermost ASGI layer of the session server, before the framework sees a request."""

from __future__ import annotations

from typing import Any

from datagauntlet.frontdoors.origin_guard import Guard, asgi_refusal, refuse_asgi
from datagauntlet.frontdoors.server import ws
from datagauntlet.frontdoors.server.forward import Peers, send_json
from datagauntlet.frontdoors.server.protocol import BadRequest
from datagauntlet.frontdoors.server.sessions import SessionStore


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
