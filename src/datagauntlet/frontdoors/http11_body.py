"""Reading one HTTP/1.1 response off its connection: the head parsed, how its body ends
(Content-Length, chunked, until close, or none), and the body streamed to httpx as the caller
iterates, with the connection handed back to its pool once the body has been read whole."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

import httpx

from datagauntlet.frontdoors.http11_connection import Connection

MAX_CHUNK_LINE = 4 * 1024  # a chunk-size line, extensions included
READ_SIZE = 64 * 1024
NO_BODY_STATUS = frozenset({204, 304})

Origin = tuple[str, str, int]


class Pool(Protocol):
    """Where a body gives its connection back (Http11Transport)."""

    def checkin(self, origin: Origin, conn: Connection) -> None: ...

    def release(self) -> None: ...


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


def framing(
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


class ResponseBody(httpx.AsyncByteStream):
    """A response body read off its connection as the caller iterates; when it is read to its
    end the connection goes back to the pool (keep-alive), else it is closed. The pool slot is
    given back exactly once either way."""

    def __init__(
        self,
        pool: Pool,
        origin: Origin,
        conn: Connection,
        request: httpx.Request,
        status: int,
        headers: list[tuple[bytes, bytes]],
        timeout: float | None,
    ) -> None:
        self._pool, self._origin, self._conn, self._timeout = pool, origin, conn, timeout
        self._mode, self._length, self._keep = framing(request, status, headers)
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
