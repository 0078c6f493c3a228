"""A lean load client for the session server: raw WebSocket frames on asyncio protocols.

A load generator built on a full WebSocket library spends as much CPU per message as the server
does, and on a 2-core machine it then takes the server's core. This one sends frames that were
encoded (and masked) before the run and reads a reply by slicing the frame header, so a call
costs the client a few microseconds. It speaks only what the benchmark needs: one request in
flight per connection, text frames, answering the server's pings, HTTP/1.1 keep-alive for
`POST /sessions`.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections import deque


def client_frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """One masked client frame (RFC 6455 5.3: every client frame is masked)."""
    n = len(payload)
    if n < 126:
        head = bytes([0x80 | opcode, 0x80 | n])
    elif n < 1 << 16:
        head = bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, 0x80 | 127]) + n.to_bytes(8, "big")
    mask = os.urandom(4)
    if not n:
        return head + mask
    key = int.from_bytes((mask * (n // 4 + 1))[:n], "little")
    masked = (int.from_bytes(payload, "little") ^ key).to_bytes(n, "little")
    return head + mask + masked


class Closed(Exception):
    """The server closed the connection (or sent a close frame)."""


class _Conn(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[bytes] | None = None
        self.ready: deque[bytes] = deque()
        self.upgraded = False
        self.closed = False
        self._fragments: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(Closed("connection lost"))

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.upgraded:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buf[: end + 4])
            del self.buf[: end + 4]
            self._deliver(head)
            return
        self._frames()

    def _frames(self) -> None:
        buf = self.buf
        while len(buf) >= 2:
            b0, b1 = buf[0], buf[1]
            n = b1 & 0x7F
            start = 2
            if n == 126:
                if len(buf) < 4:
                    return
                n, start = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                if len(buf) < 10:
                    return
                n, start = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) < start + n:
                return
            payload = bytes(buf[start : start + n])
            del buf[: start + n]
            opcode = b0 & 0x0F
            if opcode == 0x9:  # ping: answer at once, as RFC 6455 asks
                assert self.transport is not None
                self.transport.write(client_frame(payload, 0xA))
            elif opcode == 0x8:
                self.closed = True
                self._deliver(b"")
            elif opcode in (0x0, 0x1, 0x2):
                self._fragments.append(payload)
                if b0 & 0x80:
                    message = b"".join(self._fragments)
                    self._fragments = []
                    self._deliver(message)

    def _deliver(self, message: bytes) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(message)
        else:
            self.ready.append(message)

    async def next(self) -> bytes:
        if self.ready:
            return self.ready.popleft()
        if self.closed:
            raise Closed("connection closed")
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            return await self.waiter
        finally:
            self.waiter = None


class WebSocket:
    """A client WebSocket: `send(frame)` with a frame from `client_frame`, `recv()` the next
    message's bytes (b"" after the server's close frame)."""

    def __init__(self, conn: _Conn) -> None:
        self._conn = conn

    @classmethod
    async def connect(cls, port: int, path: str) -> WebSocket:
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(_Conn, "127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        assert conn.transport is not None
        conn.transport.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = await conn.next()
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            conn.transport.close()
            status = head.split(b"\r\n", 1)[0].decode(errors="replace")
            raise Closed(f"upgrade refused: {status}")
        conn.upgraded = True
        if conn.buf:
            conn._frames()
        return cls(conn)

    def send(self, frame: bytes) -> None:
        if self._conn.closed or self._conn.transport is None:
            raise Closed("connection closed")
        self._conn.transport.write(frame)

    async def recv(self) -> bytes:
        return await self._conn.next()

    async def request(self, frame: bytes) -> bytes:
        self.send(frame)
        return await self._conn.next()

    def close(self) -> None:
        if self._conn.transport is not None and not self._conn.closed:
            self._conn.transport.write(client_frame(b"\x03\xe8", 0x8))
            self._conn.transport.close()


class Http:
    """One keep-alive HTTP/1.1 connection for JSON requests (session creation)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        for attempt in (0, 1):  # a keep-alive connection the server closed: reconnect once
            if self._streams is None:
                self._streams = await asyncio.open_connection("127.0.0.1", self.port)
            reader, writer = self._streams
            writer.write(
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                self.close()
                if attempt:
                    raise
                continue
            status = int(head.split(b" ", 2)[1])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            return status, await reader.readexactly(length)
        raise Closed("unreachable")

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None
