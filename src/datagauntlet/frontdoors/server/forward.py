"""Reaching the worker that holds a session, from any other worker of the same server.

Every worker accepts connections on the server's one address, so a request for a session can
land on a worker that does not hold it. The session id names its worker (sessions.owner_of);
each worker also listens on a private Unix socket in the server's run directory (mode 0700),
and a request for another worker's session is passed there whole:

- HTTP (calls, answers, scores, DELETE, MCP, OpenEnv's HTTP `step`/`state`): the body is read
  here (bounded by the same limit the owner applies), sent on, and the owner's reply streamed
  back as it comes (an MCP event stream included) until either side hangs up.
- WebSocket (`/sessions/{id}/ws`): this worker accepts the client and relays each message to a
  WebSocket it opens to the owner, and back; a close on either side closes the other with the
  same code.

A passed request carries the run's secret in `HOP_HEADER`; the owner serves such a request
itself and never passes it on again. A request with a wrong or missing secret is an ordinary
one (routed by its session id), so forging the header gains nothing. Connections that open and
play sessions on their own (`WS /ws`, OpenEnv's WebSocket) never leave the worker that took
them; that is the load path and it pays nothing here.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from typing import Any
from urllib.parse import parse_qs

from datagauntlet.frontdoors.server.protocol import BadRequest, dumps
from datagauntlet.frontdoors.server.sessions import owner_of

logger = logging.getLogger("datagauntlet.server")

HOP_HEADER = b"x-datagauntlet-hop"
# Connection-level headers belong to one hop; the rest of a request passes unchanged.
_HOP_BY_HOP = {
    b"connection",
    b"keep-alive",
    b"transfer-encoding",
    b"te",
    b"trailer",
    b"upgrade",
    b"proxy-authorization",
    b"proxy-connection",
    HOP_HEADER,
}
_GONE = (
    "the worker holding this session stopped while answering; the session is lost (see GET /health)"
)


class Peers:
    """This worker's index, every worker's private socket, and clients to reach them."""

    def __init__(self, index: int, paths: list[str], secret: str, max_body: int) -> None:
        self.index = index
        self.paths = paths
        self.secret = secret.encode()
        self.max_body = max_body
        self._clients: dict[int, Any] = {}

    # --- where a request goes -------------------------------------------------------------
    def is_hop(self, scope: dict[str, Any]) -> bool:
        for key, value in scope["headers"]:
            if key == HOP_HEADER:
                return hmac.compare_digest(value, self.secret)
        return False

    def elsewhere(self, session_id: str | None) -> int | None:
        """The other worker holding `session_id`; None when it is this one's or nobody's (the
        local store then answers, 404 for an id that names no worker)."""
        if not session_id:
            return None
        owner = owner_of(session_id)
        if owner is None or owner == self.index or owner >= len(self.paths):
            return None
        return owner

    def route(self, scope: dict[str, Any]) -> int | None:
        """The worker a request must go to, from its path or query alone (None: here)."""
        path = scope["path"]
        if path.startswith("/sessions/"):
            return self.elsewhere(path[10:].partition("/")[0])
        if path.startswith("/openenv/") and path.endswith("/state"):
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            sid = (query.get("episode_id") or query.get("session_id") or [""])[0]
            return self.elsewhere(sid)
        return None

    @staticmethod
    def needs_body(scope: dict[str, Any]) -> bool:
        """OpenEnv's HTTP `step` names its episode in the body."""
        return (
            scope["method"] == "POST"
            and scope["path"].startswith("/openenv/")
            and (scope["path"].endswith("/step"))
        )

    def route_body(self, body: bytes) -> int | None:
        try:
            data = json.loads(body)
        except ValueError:
            return None  # the owner of nothing: the local route answers the bad JSON
        if not isinstance(data, dict):
            return None
        sid = data.get("episode_id")
        action = data.get("action")
        if not sid and isinstance(action, dict) and isinstance(action.get("metadata"), dict):
            sid = action["metadata"].get("episode_id")
        return self.elsewhere(sid) if isinstance(sid, str) else None

    # --- HTTP -----------------------------------------------------------------------------
    def _client(self, worker: int) -> Any:
        client = self._clients.get(worker)
        if client is None:
            import httpx

            client = self._clients[worker] = httpx.AsyncClient(
                transport=httpx.AsyncHTTPTransport(uds=self.paths[worker]),
                base_url="http://worker",
                timeout=httpx.Timeout(None, connect=10.0),  # a call may grade for a while
                trust_env=False,
            )
        return client

    def _headers(self, scope: dict[str, Any]) -> list[tuple[bytes, bytes]]:
        kept = [(k, v) for k, v in scope["headers"] if k not in _HOP_BY_HOP]
        return [*kept, (HOP_HEADER, self.secret)]

    async def read_body(self, scope: dict[str, Any], receive: Any) -> bytes:
        """The whole request body, refused past the limit the owner would apply."""
        for key, value in scope["headers"]:
            if key == b"content-length":
                if not value.isdigit():
                    raise BadRequest(
                        400, f"Content-Length must be a number of bytes, got {value.decode()!r}"
                    )
                if int(value) > self.max_body:
                    raise BadRequest(
                        413, f"body of {int(value):,} bytes is over the limit of {self.max_body:,}"
                    )
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise BadRequest(400, "the client closed the connection before its body ended")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                raise BadRequest(413, f"body is over the limit of {self.max_body:,} bytes")
            chunks.append(chunk)
            if not message.get("more_body"):
                return b"".join(chunks)

    async def forward_http(
        self, worker: int, scope: dict[str, Any], receive: Any, send: Any, body: bytes
    ) -> None:
        import httpx

        client = self._client(worker)
        target = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string"):
            target += b"?" + scope["query_string"]
        request = client.build_request(
            scope["method"], target.decode("latin-1"), headers=self._headers(scope), content=body
        )
        started = False
        try:
            reply = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            await send_json(send, 503, f"the worker holding this session is not answering: {exc}")
            return
        try:
            headers = [(k, v) for k, v in reply.headers.raw if k.lower() not in _HOP_BY_HOP]
            start = {"type": "http.response.start", "status": reply.status_code}
            await send({**start, "headers": headers})
            started = True
            relay = asyncio.ensure_future(self._relay_body(reply, send))
            hangup = asyncio.ensure_future(_disconnected(receive))
            done, _ = await asyncio.wait({relay, hangup}, return_when=asyncio.FIRST_COMPLETED)
            for task in (relay, hangup):
                if task not in done:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            if relay in done:
                relay.result()
        except httpx.HTTPError:
            if not started:
                await send_json(send, 502, _GONE)
            else:  # mid-body: all that can be said is that the body ends here
                with contextlib.suppress(Exception):
                    await send({"type": "http.response.body", "body": b""})
        finally:
            await reply.aclose()

    @staticmethod
    async def _relay_body(reply: Any, send: Any) -> None:
        async for chunk in reply.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def get_json(self, worker: int, path: str) -> Any:
        """A worker's own answer to a GET (its local sessions), for answers about the server."""
        client = self._client(worker)
        reply = await client.get(path, headers=[(b"host", b"localhost"), (HOP_HEADER, self.secret)])
        return reply.json()

    # --- WebSocket ------------------------------------------------------------------------
    async def relay_ws(self, worker: int, scope: dict[str, Any], receive: Any, send: Any) -> None:
        from websockets.asyncio.client import unix_connect
        from websockets.exceptions import ConnectionClosed

        from datagauntlet.frontdoors.server.ws import worker_header

        if (await receive())["type"] != "websocket.connect":
            return
        target = scope.get("raw_path") or scope["path"].encode()
        try:
            upstream = await unix_connect(
                self.paths[worker],
                uri=f"ws://localhost{target.decode('latin-1')}",
                additional_headers=[(HOP_HEADER.decode(), self.secret.decode())],
                max_size=None,  # the owner's replies; the client's messages are bounded here
                compression=None,
                ping_interval=None,
                proxy=None,
                open_timeout=10,
            )
        except Exception as exc:  # refused, unreachable, timed out: all answered alike
            await send({"type": "websocket.accept", "headers": worker_header(self.index)})
            message = f"the worker holding this session is not answering: {type(exc).__name__}"
            await send({"type": "websocket.send", "text": dumps({"error": message, "status": 503})})
            await send({"type": "websocket.close", "code": 1011})
            return
        await send({"type": "websocket.accept", "headers": worker_header(self.index)})

        async def down() -> None:
            with contextlib.suppress(ConnectionClosed):
                async for message in upstream:
                    if isinstance(message, str):
                        await send({"type": "websocket.send", "text": message})
                    else:
                        await send({"type": "websocket.send", "bytes": message})
            code = upstream.close_code
            await send({"type": "websocket.close", "code": code if _sendable(code) else 1011})

        async def up() -> None:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return
                text = message.get("text")
                with contextlib.suppress(ConnectionClosed):
                    await upstream.send(text if text is not None else message.get("bytes") or b"")

        tasks = {asyncio.ensure_future(down()), asyncio.ensure_future(up())}
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await upstream.close()

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            with contextlib.suppress(Exception):
                await client.aclose()


def _sendable(code: int | None) -> bool:
    return code is not None and (code in (1000, 1001, 1003, 1007, 1008, 1009, 1011) or code >= 3000)


async def _disconnected(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def send_json(send: Any, status: int, message: str) -> None:
    body = dumps({"error": message, "status": status}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
