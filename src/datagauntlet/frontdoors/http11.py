"""An httpx transport speaking HTTP/1.1 with keep-alive on plain asyncio, for the model client.

The openai SDK and httpx stay the client: requests are httpx Requests, answers httpx Responses
(httpx still decodes gzip and the like, the SDK still raises its typed errors). Only the layer
under them changes. httpx's default (httpcore with h11 on anyio) costs several times the rest
of a request's CPU at hundreds of requests at once: every request and every release scans the
pool and asks each idle connection whether it was closed (a socket poll and a `getpeername`),
cancel scopes wrap every read and write, and each header is validated byte by byte. Here each
connection is an asyncio Protocol that already knows whether the peer closed it, idle
connections wait in a list per origin, and a request is one write and one parse.

What it keeps of HTTP/1.1: Content-Length, chunked and read-until-close bodies, 1xx skipped,
HEAD/204/304 without a body, `Connection: close` either way, TLS (with SNI) for https, idle
connections dropped after KEEPALIVE_EXPIRY or when the peer closed them. Errors are httpx's
own (ConnectError, ReadTimeout, RemoteProtocolError, PoolTimeout...), so the SDK maps them as
it always does. A response head over MAX_HEAD_BYTES, or a malformed one, is a
RemoteProtocolError, never a hang. Proxies set in the environment are not this transport's:
models.http_client mounts httpx's own transport for them.

This file is the pool and the request; a connection is http11_connection.py, reading a
response http11_body.py.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Iterable

import httpx

from datagauntlet.frontdoors.http11_body import Origin, ResponseBody, parse_head
from datagauntlet.frontdoors.http11_connection import Connection

MAX_HEAD_BYTES = 64 * 1024  # status line + headers of one response
KEEPALIVE_EXPIRY = 5.0  # seconds an idle connection is kept (servers close theirs near here)

SocketOption = tuple[int, int, int]


class Http11Transport(httpx.AsyncBaseTransport):
    def __init__(
        self,
        max_connections: int = 256,
        ssl_context: ssl.SSLContext | None = None,
        socket_options: Iterable[SocketOption] = (),
        keepalive_expiry: float = KEEPALIVE_EXPIRY,
    ) -> None:
        self._slots = asyncio.Semaphore(max_connections)
        self._ssl = ssl_context
        self._socket_options = list(socket_options)
        self._expiry = keepalive_expiry
        self._idle: dict[Origin, list[tuple[float, Connection]]] = {}
        self._closed = False

    # --- connections ---------------------------------------------------------------------
    def _checkout(self, origin: Origin) -> Connection | None:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            since, conn = idle.pop()
            if conn.usable and now - since < self._expiry:
                return conn
            conn.close()
        return None

    def checkin(self, origin: Origin, conn: Connection) -> None:
        if self._closed or not conn.usable:
            conn.close()
        else:
            self._idle.setdefault(origin, []).append((time.monotonic(), conn))

    def release(self) -> None:
        self._slots.release()

    async def _connect(
        self, origin: Origin, request: httpx.Request, timeout: float | None
    ) -> Connection:
        scheme, host, port = origin
        tls: ssl.SSLContext | None = None
        if scheme == "https":
            tls = self._ssl or ssl.create_default_context()
        sni = request.extensions.get("sni_hostname") or host
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, conn = await loop.create_connection(
                    Connection, host, port, ssl=tls, server_hostname=sni if tls else None
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {host}:{port} in {timeout} s") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc}") from exc
        sock = transport.get_extra_info("socket")
        if sock is not None:
            for option in self._socket_options:
                sock.setsockopt(*option)
        return conn

    # --- one exchange ----------------------------------------------------------------------
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise httpx.ConnectError("the transport is closed")
        url = request.url
        scheme = url.scheme
        if scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"no HTTP/1.1 for the scheme {scheme!r}")
        origin = (scheme, url.host, url.port or (443 if scheme == "https" else 80))
        timeouts = request.extensions.get("timeout", {})
        try:
            async with asyncio.timeout(timeouts.get("pool")):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("no free connection within the pool timeout") from None
        conn: Connection | None = None
        try:
            conn = self._checkout(origin) or await self._connect(
                origin, request, timeouts.get("connect")
            )
            await self._send(conn, request, timeouts.get("write"))
            status, reason, headers = await self._read_head(conn, timeouts.get("read"))
            body = ResponseBody(self, origin, conn, request, status, headers, timeouts.get("read"))
        except BaseException:
            if conn is not None:
                conn.close()
            self.release()
            raise
        return httpx.Response(
            status,
            headers=headers,
            stream=body,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )

    async def _send(self, conn: Connection, request: httpx.Request, timeout: float | None) -> None:
        target = request.url.raw_path
        head = [request.method.encode("ascii"), b" ", target, b" HTTP/1.1\r\n"]
        for name, value in request.headers.raw:
            head += (name, b": ", value, b"\r\n")
        head.append(b"\r\n")
        chunked = request.headers.get("transfer-encoding", "").lower() == "chunked"
        data = b"".join(head)
        if isinstance(request.stream, httpx.ByteStream) and not chunked:
            data += b"".join([part async for part in request.stream])
            self._write(conn, data)
        else:
            self._write(conn, data)
            async for part in request.stream:  # type: ignore[union-attr]
                if chunked and part:
                    part = b"%x\r\n%b\r\n" % (len(part), part)
                self._write(conn, part)
                await conn.drain(timeout)
            if chunked:
                self._write(conn, b"0\r\n\r\n")
        await conn.drain(timeout)

    @staticmethod
    def _write(conn: Connection, data: bytes) -> None:
        if conn.eof or conn.transport is None or conn.transport.is_closing():
            raise httpx.WriteError("the server closed the connection")
        if data:
            conn.transport.write(data)

    async def _read_head(
        self, conn: Connection, timeout: float | None
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        limit = MAX_HEAD_BYTES + 4
        while True:  # 1xx answers come before the real one
            scanned = 0
            while (end := conn.buffer.find(b"\r\n\r\n", max(0, scanned - 3), limit)) < 0:
                if len(conn.buffer) >= limit:
                    raise httpx.RemoteProtocolError(
                        f"the response head is over {MAX_HEAD_BYTES} bytes"
                    )
                if conn.eof:
                    raise httpx.RemoteProtocolError(
                        "the server closed the connection without a full response head"
                    )
                scanned = len(conn.buffer)
                await conn.fill(timeout)
            status, reason, headers = parse_head(conn.take(end + 4)[:end])
            if status >= 200 or status == 101:
                return status, reason, headers

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            for _, conn in idle:
                conn.close()
        self._idle.clear()
