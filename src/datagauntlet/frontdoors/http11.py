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
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator, Iterable

import httpx

MAX_HEAD_BYTES = 64 * 1024  # status line + headers of one response
MAX_CHUNK_LINE = 4 * 1024  # a chunk-size line, extensions included
READ_SIZE = 64 * 1024
KEEPALIVE_EXPIRY = 5.0  # seconds an idle connection is kept (servers close theirs near here)
# Past this many unread bytes the socket stops being read, so an endpoint that sends faster
# than the reader reads waits in the kernel instead of filling this process's memory.
READ_HIGH_WATER = 1 << 20
NO_BODY_STATUS = frozenset({204, 304})

SocketOption = tuple[int, int, int]


class _Protocol(asyncio.Protocol):
    """One connection: receives into a buffer, wakes the one reader or writer waiting on it."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.transport: asyncio.Transport | None = None
        self._readable: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > READ_HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False  # close our side too: HTTP/1.1 has no use for a half-open connection

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake_reader()
        self.resume_writing()

    def pause_writing(self) -> None:
        if self._writable is None:
            self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        waiter, self._writable = self._writable, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake_reader(self) -> None:
        waiter, self._readable = self._readable, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    @property
    def usable(self) -> bool:
        """Idle and still open: no stray bytes from the peer, no end seen."""
        return not self.buffer and not self.eof and not self.transport.is_closing()  # type: ignore[union-attr]

    async def fill(self, timeout: float | None) -> None:
        """Wait until at least one more byte (or the end) is there."""
        if self.transport is not None and len(self.buffer) <= READ_HIGH_WATER:
            self.transport.resume_reading()
        self._readable = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(timeout):
                await self._readable
        except TimeoutError:
            raise httpx.ReadTimeout(f"no bytes from the server within {timeout} s") from None

    async def drain(self, timeout: float | None) -> None:
        if self._writable is None:
            return
        try:
            async with asyncio.timeout(timeout):
                await asyncio.shield(self._writable)
        except TimeoutError:
            raise httpx.WriteTimeout(f"the server took no bytes within {timeout} s") from None

    def take(self, n: int) -> bytes:
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


Origin = tuple[str, str, int]


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
        self._idle: dict[Origin, list[tuple[float, _Protocol]]] = {}
        self._closed = False

    # --- connections ---------------------------------------------------------------------
    def _checkout(self, origin: Origin) -> _Protocol | None:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            since, conn = idle.pop()
            if conn.usable and now - since < self._expiry:
                return conn
            conn.close()
        return None

    def checkin(self, origin: Origin, conn: _Protocol) -> None:
        if self._closed or not conn.usable:
            conn.close()
        else:
            self._idle.setdefault(origin, []).append((time.monotonic(), conn))

    def release(self) -> None:
        self._slots.release()

    async def _connect(
        self, origin: Origin, request: httpx.Request, timeout: float | None
    ) -> _Protocol:
        scheme, host, port = origin
        tls: ssl.SSLContext | None = None
        if scheme == "https":
            tls = self._ssl or ssl.create_default_context()
        sni = request.extensions.get("sni_hostname") or host
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, conn = await loop.create_connection(
                    _Protocol, host, port, ssl=tls, server_hostname=sni if tls else None
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
        conn: _Protocol | None = None
        try:
            conn = self._checkout(origin) or await self._connect(
                origin, request, timeouts.get("connect")
            )
            await self._send(conn, request, timeouts.get("write"))
            status, reason, headers = await self._read_head(conn, timeouts.get("read"))
            body = _Body(self, origin, conn, request, status, headers, timeouts.get("read"))
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

    async def _send(self, conn: _Protocol, request: httpx.Request, timeout: float | None) -> None:
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
    def _write(conn: _Protocol, data: bytes) -> None:
        if conn.eof or conn.transport is None or conn.transport.is_closing():
            raise httpx.WriteError("the server closed the connection")
        if data:
            conn.transport.write(data)

    async def _read_head(
        self, conn: _Protocol, timeout: float | None
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


def parse_head(head: bytes) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise httpx.RemoteProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    status = int(parts[1])
    if not 100 <= status <= 999:
        raise httpx.RemoteProtocolError(f"status code out of range: {status}")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip() or line[:1] in (b" ", b"\t"):
            raise httpx.RemoteProtocolError(f"malformed response header line: {line[:80]!r}")
        headers.append((name, value.strip()))
    return status, parts[2] if len(parts) > 2 else b"", headers


def _framing(
    request: httpx.Request, status: int, headers: list[tuple[bytes, bytes]]
) -> tuple[str, int, bool]:
    """(how the body ends: "none" | "length" | "chunked" | "close", its length, keep-alive?)."""
    keep = True
    coding: bytes | None = None
    lengths = set()
    for name, value in headers:
        lower = name.lower()
        if lower == b"connection" and b"close" in value.lower():
            keep = False
        elif lower == b"transfer-encoding":
            coding = value.lower()
        elif lower == b"content-length":
            lengths.add(value)
    if request.headers.get("connection", "").lower() == "close":
        keep = False
    if request.method == "HEAD" or status in NO_BODY_STATUS or status < 200:
        return "none", 0, keep
    if coding is not None:
        if coding.rsplit(b",", 1)[-1].strip() == b"chunked":
            return "chunked", 0, keep
        return "close", 0, False
    if lengths:
        if len(lengths) > 1 or not next(iter(lengths)).isdigit():
            raise httpx.RemoteProtocolError(f"bad Content-Length: {sorted(lengths)!r}")
        return "length", int(next(iter(lengths))), keep
    return "close", 0, False


class _Body(httpx.AsyncByteStream):
    """A response body read off its connection as the caller iterates; when it is read to its
    end the connection goes back to the pool (keep-alive), else it is closed. The pool slot is
    given back exactly once either way."""

    def __init__(
        self,
        pool: Http11Transport,
        origin: Origin,
        conn: _Protocol,
        request: httpx.Request,
        status: int,
        headers: list[tuple[bytes, bytes]],
        timeout: float | None,
    ) -> None:
        self._pool, self._origin, self._conn, self._timeout = pool, origin, conn, timeout
        self._mode, self._length, self._keep = _framing(request, status, headers)
        self._done = False
        self._released = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            if self._mode == "length":
                async for part in self._fixed(self._length):
                    yield part
            elif self._mode == "chunked":
                async for part in self._chunks():
                    yield part
            elif self._mode == "close":
                async for part in self._until_close():
                    yield part
            self._done = True
        except BaseException:
            await self.aclose()
            raise
        await self.aclose()

    async def _fixed(self, remaining: int) -> AsyncIterator[bytes]:
        conn = self._conn
        while remaining > 0:
            if not conn.buffer:
                if conn.eof:
                    raise httpx.RemoteProtocolError(
                        f"the server closed the connection {remaining} bytes short of the body"
                    )
                await conn.fill(self._timeout)
                continue
            part = conn.take(min(remaining, READ_SIZE))
            remaining -= len(part)
            yield part

    async def _line(self) -> bytes:
        conn = self._conn
        while (end := conn.buffer.find(b"\r\n")) < 0:
            if len(conn.buffer) > MAX_CHUNK_LINE:
                raise httpx.RemoteProtocolError("a chunk line is too long")
            if conn.eof:
                raise httpx.RemoteProtocolError("the server closed the connection mid-chunk")
            await conn.fill(self._timeout)
        if end > MAX_CHUNK_LINE:
            raise httpx.RemoteProtocolError("a chunk line is too long")
        return conn.take(end + 2)[:end]

    async def _chunks(self) -> AsyncIterator[bytes]:
        while True:
            size_text = (await self._line()).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise httpx.RemoteProtocolError(f"bad chunk size {size_text[:40]!r}") from None
            if size == 0:
                while await self._line():  # trailers, up to the empty line
                    pass
                return
            async for part in self._fixed(size):
                yield part
            if await self._line() != b"":
                raise httpx.RemoteProtocolError("a chunk did not end with CRLF")

    async def _until_close(self) -> AsyncIterator[bytes]:
        conn = self._conn
        while True:
            if conn.buffer:
                yield conn.take(READ_SIZE)
            elif conn.eof:
                return
            else:
                await conn.fill(self._timeout)

    async def aclose(self) -> None:
        if self._released:
            return
        self._released = True
        if self._done and self._keep and self._mode != "close":
            self._pool.checkin(self._origin, self._conn)
        else:
            self._conn.close()
        self._pool.release()
