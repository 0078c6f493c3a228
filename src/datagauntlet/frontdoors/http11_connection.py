"""One HTTP/1.1 connection of the model client's transport (http11.py), as an asyncio Protocol:
bytes arrive into a buffer and wake the one reader waiting; a full write buffer makes the
writer wait. It already knows whether the peer closed it, so the pool asks nothing of the
socket to reuse it."""

from __future__ import annotations

import asyncio

import httpx

# Past this many unread bytes the socket stops being read, so an endpoint that sends faster
# than the reader reads waits in the kernel instead of filling this process's memory.
READ_HIGH_WATER = 1 << 20


class Connection(asyncio.Protocol):
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
