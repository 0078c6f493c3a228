"""http_json's rules on one asyncio event loop: for a door that hundreds of clients hold open.

The stdlib doors give each connection a thread. At hundreds of open connections those threads
spend more CPU handing the GIL to one another than answering: the scripted model used 1.4-1.9
ms of CPU a request with 256 clients connected, 0.4 ms with 8. Here each connection is a
coroutine on one loop, and the rules of `http_json` hold as they do there:

- every answer is JSON, for any method and path, malformed request lines and heads included;
- a body must declare its length, checked before a byte is read (400 for a length that is not
  a non-negative integer, 411 for none or chunked, 413 naming the limit, after which the rest
  of the body is read and dropped so the client sees the answer);
- a client silent for `socket_timeout` (mid-request or between requests) is dropped;
- bodies in flight share a byte budget of one maximal body (a 503 if it does not come in time);
- a client that hangs up is not an error; a port in use is one ValueError naming the address;
- a foreign Host or Origin, or a body that is not JSON, is refused before anything is read
  (origin_guard.py).

A request head is at most MAX_HEAD_BYTES (431 past it) with at most MAX_HEADERS lines.
It runs on uvloop when that is installed (event_loop.py). Subclasses set ROUTES,
MAX_BODY_BYTES, may override `error_body`, and answer in `respond`,
raising HttpError to refuse.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, ClassVar

from datagauntlet.frontdoors.event_loop import run as run_on_loop
from datagauntlet.frontdoors.http_json import (
    DRAIN_CHUNK,
    DRAIN_LIMIT,
    JSON_TYPE,
    HttpError,
    declared_length,
    listen_error,
    parse_json_body,
)
from datagauntlet.frontdoors.origin_guard import Guard

MAX_HEAD_BYTES = 64 * 1024
MAX_HEADERS = 100
READ_CHUNK = 1 << 20
BACKLOG = 1024


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


@dataclass
class JsonReply:
    status: int
    payload: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class StreamReply:
    """A body without a length (server-sent events): the connection closes after it."""

    status: int
    content_type: str
    parts: list[bytes]
    headers: dict[str, str] = field(default_factory=dict)


Reply = JsonReply | StreamReply


class _Budget:
    """Bytes that request bodies may hold at once, across the server's connections."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._freed = asyncio.Event()

    async def acquire(self, n: int, timeout: float) -> bool:
        n = min(n, self.limit)  # a body the size of the whole budget waits for all of it
        try:
            async with asyncio.timeout(timeout):
                while self.used + n > self.limit:
                    self._freed.clear()
                    await self._freed.wait()
        except TimeoutError:
            return False
        self.used += n
        return True

    def release(self, n: int) -> None:
        self.used -= min(n, self.limit)
        self._freed.set()


class Request:
    """One parsed request head; the body is read on demand, under the server's rules."""

    def __init__(
        self,
        server: AioJsonServer,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        method: str,
        target: str,
        version: tuple[int, int],
        headers: dict[str, str],
    ) -> None:
        self.server, self._reader, self._writer = server, reader, writer
        self.method, self.target, self.version, self.headers = method, target, version, headers
        self.path, _, self.query = target.partition("?")
        self.held = 0  # bytes of the body budget this request holds

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version >= (1, 1):
            return "close" not in connection
        return "keep-alive" in connection

    async def read_body(self) -> bytes:
        """The body, after checking its declared length against the limit."""
        length = declared_length(
            self.headers.get("transfer-encoding"),
            self.headers.get("content-length"),
            self.server.MAX_BODY_BYTES,
        )
        if length and not await self.server._budget.acquire(length, self.server.socket_timeout):
            raise HttpError(503, "the server is busy with other large bodies; retry")
        self.held = length
        if self.headers.get("expect", "").lower() == "100-continue" and self.version >= (1, 1):
            self._writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        parts: list[bytes] = []
        got = 0
        while got < length:
            async with asyncio.timeout(self.server.socket_timeout):
                part = await self._reader.read(min(length - got, READ_CHUNK))
            if not part:
                break
            parts.append(part)
            got += len(part)
        if got < length:
            raise HttpError(400, f"body ended after {got} of {length} declared bytes")
        return parts[0] if len(parts) == 1 else b"".join(parts)

    async def read_json(self) -> Any:
        return parse_json_body(await self.read_body())

    async def drain(self) -> None:
        """Read and drop what is left of a refused body (bounded), so the answer is seen."""
        try:
            left = min(int(self.headers.get("content-length", "0")), DRAIN_LIMIT)
            while left > 0:
                async with asyncio.timeout(self.server.socket_timeout):
                    part = await self._reader.read(min(DRAIN_CHUNK, left))
                if not part:
                    return
                left -= len(part)
        except (OSError, ValueError, TimeoutError):
            return


def parse_head(head: bytes) -> tuple[str, str, tuple[int, int], dict[str, str]]:
    """(method, target, version, headers with lower-case names; the first of a repeated name
    wins) of a request head without its blank line; HttpError for what cannot be served."""
    lines = head.decode("iso-8859-1").split("\r\n")
    words = lines[0].split()
    if len(words) == 3:
        method, target, text = words
        if not text.startswith("HTTP/"):
            raise HttpError(400, f"bad request version {text[:40]!r}")
        major, dot, minor = text[5:].partition(".")
        if not (dot and major.isdigit() and minor.isdigit() and len(major) + len(minor) < 10):
            raise HttpError(400, f"bad request version {text[:40]!r}")
        version = (int(major), int(minor))
        if version >= (2, 0):
            raise HttpError(505, f"HTTP version {text[:40]} is not served; use HTTP/1.1")
        if version < (1, 0):
            raise HttpError(400, f"bad request version {text[:40]!r}")
    elif len(words) == 2:
        raise HttpError(400, "HTTP/0.9 requests are not served; use HTTP/1.1")
    else:
        raise HttpError(400, f"bad request line {lines[0][:80]!r}")
    if len(lines) - 1 > MAX_HEADERS:
        raise HttpError(431, f"too many header lines (over {MAX_HEADERS})")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or line[:1] in (" ", "\t"):
            raise HttpError(400, f"malformed header line {line[:80]!r}")
        headers.setdefault(name.lower(), value.strip())
    return method, target, version, headers


class AioJsonServer:
    """Listens from construction (so a port in use is refused at once); serves from `start()`
    (a background thread) or `serve_forever()` (this thread) until `stop()`."""

    MAX_BODY_BYTES: ClassVar[int] = 1024 * 1024
    ROUTES: ClassVar[tuple[str, ...]] = ()
    ALLOWED_METHODS: ClassVar[tuple[str, ...]] = ("GET", "POST")

    def __init__(
        self,
        host: str,
        port: int,
        socket_timeout: float = 30.0,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
    ) -> None:
        self.socket_timeout = socket_timeout
        self.guard = Guard(allow_hosts, allow_origins)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._sock.bind((host, port))
            self._sock.listen(BACKLOG)
        except OSError as exc:
            self._sock.close()
            raise listen_error(host, port, exc) from None
        self.server_address: tuple[str, int] = self._sock.getsockname()[:2]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[asyncio.Task[None]] = set()

    # --- what a door says ---------------------------------------------------------------------
    async def respond(self, request: Request) -> Reply:
        raise HttpError(404, f"no route {request.method} {request.path[:200]}{self.routes_hint()}")

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": message}

    def routes_hint(self) -> str:
        return "; endpoints: " + ", ".join(self.ROUTES) if self.ROUTES else ""

    # --- running ------------------------------------------------------------------------------
    def start(self) -> AioJsonServer:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def _run(self, ready: threading.Event) -> None:
        run_on_loop(self._serve(ready))

    def serve_forever(self) -> None:
        run_on_loop(self._serve(None))

    def stop(self) -> None:
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already ended
                loop.call_soon_threadsafe(stopping.set)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.close()

    def close(self) -> None:
        self._sock.close()

    async def _serve(self, ready: threading.Event | None) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        self._budget = _Budget(self.MAX_BODY_BYTES)
        server = await asyncio.start_server(
            self._connection, sock=self._sock, limit=MAX_HEAD_BYTES + 4, backlog=BACKLOG
        )
        if ready is not None:
            ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)

    # --- one connection -----------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            # head and body may leave in two writes; with Nagle the body would wait for the
            # client's delayed ACK (~40 ms)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while await self._exchange(reader, writer):
                pass
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError):
            pass  # the client went away or stalled: its connection is simply dropped
        finally:
            self._connections.discard(task)
            writer.close()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """One request and its answer; whether the connection stays open for another."""
        try:
            async with asyncio.timeout(self.socket_timeout):
                head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                self._write_error(writer, "GET", 400, "the request head ended early")
            return False
        except asyncio.LimitOverrunError:
            self._write_error(writer, "GET", 431, f"request head over {MAX_HEAD_BYTES} bytes")
            return False
        head = head.lstrip(b"\r\n")[:-4]  # an empty line may come before a request
        if not head:
            return False
        method = "GET"
        try:
            method, target, version, headers = parse_head(head)
        except HttpError as exc:
            self._write_error(writer, method, exc.status, exc.message)
            return False
        if method not in self.ALLOWED_METHODS:
            hint = self.routes_hint()
            self._write_error(writer, method, 405, f"method {method} is not allowed{hint}")
            return False
        refused = self.guard.refusal(method, headers.get, self.server_address)
        if refused is not None:
            self._write_error(writer, method, refused.status, refused.message)
            return False
        request = Request(self, reader, writer, method, target, version, headers)
        try:
            reply = await self.respond(request)
        except HttpError as exc:
            self._write_error(writer, method, exc.status, exc.message)
            if exc.status == 413:
                await request.drain()
            return False
        except (ConnectionError, TimeoutError):
            raise  # a client that left or went silent: dropped without an answer
        except Exception:  # a bug of the door's: say so, and keep serving the others
            traceback.print_exc()
            self._write_error(writer, method, 500, "internal error")
            return False
        finally:
            if request.held:
                self._budget.release(request.held)
        keep = request.keep_alive
        if isinstance(reply, StreamReply):
            head_out = self._head(reply.status, reply.content_type, None, reply.headers, False)
            writer.write(head_out + b"".join(reply.parts))
            keep = False
        else:
            data = json.dumps(reply.payload).encode()
            head_out = self._head(reply.status, JSON_TYPE, len(data), reply.headers, keep)
            writer.write(head_out if method == "HEAD" else head_out + data)
        if writer.transport.get_write_buffer_size() > READ_CHUNK:
            async with asyncio.timeout(self.socket_timeout):
                await writer.drain()
        return keep

    @staticmethod
    def _head(
        status: int, content_type: str, length: int | None, headers: dict[str, str], keep: bool
    ) -> bytes:
        lines = [f"HTTP/1.1 {status} {_reason(status)}", f"Content-Type: {content_type}"]
        if length is not None:
            lines.append(f"Content-Length: {length}")
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if not keep:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _write_error(
        self, writer: asyncio.StreamWriter, method: str, status: int, message: str
    ) -> None:
        """An error answer; the connection closes after it."""
        extra = {"Allow": ", ".join(self.ALLOWED_METHODS)} if status == 405 else {}
        data = json.dumps(self.error_body(status, message)).encode()
        head = self._head(status, JSON_TYPE, len(data), extra, False)
        writer.write(head if method == "HEAD" else head + data)
