"""The mechanics every standard-library HTTP door shares: JSON in, JSON out, nothing unbounded.

- every answer is JSON, for any method and path, malformed request lines and headers included
  (Python's own error pages are HTML);
- a request body must declare its length, which is checked before a byte is read: a length
  that is not a non-negative integer is a 400, one over the door's limit a 413 naming it;
- a socket timeout frees the thread of a client that stops sending (a short body, a silent
  connection), and a real listen backlog keeps a burst of connections from being dropped;
- bodies in flight share a byte budget of one maximal body: concurrent large bodies wait their
  turn (a 503 if it does not come within the socket timeout), so six clients sending 24 MB at
  once cost what one does;
- the process keeps to two malloc arenas (malloc_arenas.py), so bodies parsed on many threads
  do not each leave their high-water mark in a thread's own arena;
- a client that hangs up is not an error worth a traceback;
- a port already in use is a one-line ValueError naming the address;
- a foreign Host or Origin, or a body that is not JSON, is refused before anything is read
  (origin_guard.py).
"""

from __future__ import annotations

import errno
import json
import sys
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs

from .malloc_arenas import cap_malloc_arenas
from .origin_guard import Guard

JSON_TYPE = "application/json"
# After a 413 the rest of an oversized body is read and dropped (in small chunks), up to this
# much, so a client that sends the whole body before reading sees the answer, not a reset.
DRAIN_LIMIT = 256 * 1024 * 1024
DRAIN_CHUNK = 64 * 1024


class HttpError(Exception):
    """Answer the request with `status` and a JSON error body carrying `message`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def listen_error(host: str, port: int, exc: OSError) -> ValueError:
    if exc.errno == errno.EADDRINUSE:
        return ValueError(
            f"cannot listen on {host}:{port}: the address is already in use "
            "(stop what holds it, or pass another --port; 0 picks a free one)"
        )
    return ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}")


def declared_length(transfer_encoding: str | None, content_length: str | None, limit: int) -> int:
    """A request body's length from its headers, checked before a byte is read (both the
    threaded and the asyncio server apply these rules)."""
    if "chunked" in (transfer_encoding or "").lower():
        raise HttpError(411, "chunked bodies are not supported; send a Content-Length")
    if content_length is None:
        raise HttpError(411, "a Content-Length header is required")
    text = content_length.strip()
    if not text.isdigit():
        raise HttpError(
            400, f"Content-Length must be a non-negative integer, got {content_length!r}"
        )
    length = int(text)
    if length > limit:
        raise HttpError(413, f"body of {length} bytes is over this server's limit of {limit} bytes")
    return length


def parse_json_body(data: bytes) -> Any:
    """A request body as JSON; anything else is a 400 saying why."""
    if not data.strip():
        raise HttpError(400, "a JSON body is required")
    try:
        return json.loads(data)
    except RecursionError:
        raise HttpError(400, "body is not valid JSON: nested too deeply") from None
    except ValueError as exc:
        raise HttpError(400, f"body is not valid JSON: {exc}") from None


class ByteBudget:
    """Bytes that request bodies may hold at once, across all of a server's threads."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._cond = threading.Condition()

    def acquire(self, n: int, timeout: float) -> bool:
        n = min(n, self.limit)  # a body the size of the whole budget waits for all of it
        with self._cond:
            ok = self._cond.wait_for(lambda: self.used + n <= self.limit, timeout)
            if ok:
                self.used += n
            return ok

    def release(self, n: int) -> None:
        with self._cond:
            self.used -= min(n, self.limit)
            self._cond.notify_all()


class JsonHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Hundreds of clients may connect at once (concurrent rollouts); the default of 5 drops some.
    request_queue_size = 1024

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[JsonHandler],
        socket_timeout: float = 30.0,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
    ) -> None:
        self.socket_timeout = socket_timeout
        self.guard = Guard(allow_hosts, allow_origins)
        cap_malloc_arenas()
        self.body_budget = ByteBudget(handler.MAX_BODY_BYTES)
        try:
            super().__init__(address, handler)
        except OSError as exc:
            raise listen_error(address[0], address[1], exc) from None

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return  # the client went away or stalled; its thread is simply released
        super().handle_error(request, client_address)


class JsonHandler(BaseHTTPRequestHandler):
    """Subclasses set `ROUTES` (shown in 404/405 answers), `MAX_BODY_BYTES`, and may override
    `error_body` for their error shape; handlers raise HttpError to refuse."""

    protocol_version = "HTTP/1.1"
    timeout = 30.0  # seconds a client may leave the socket silent, mid-request included
    MAX_BODY_BYTES: ClassVar[int] = 1024 * 1024
    ROUTES: ClassVar[tuple[str, ...]] = ()
    ALLOWED_METHODS: ClassVar[tuple[str, ...]] = ("GET", "POST")
    _held = 0  # bytes of the body budget this request holds

    def setup(self) -> None:
        self.timeout = getattr(self.server, "socket_timeout", self.timeout)
        super().setup()

    def parse_request(self) -> bool:
        """The request line and headers, then the guard: a refused request is answered here,
        before its body is read or a handler runs."""
        if not super().parse_request():
            return False
        guard: Guard | None = getattr(self.server, "guard", None)
        if guard is None:
            return True
        host, port = self.server.server_address[:2]
        refused = guard.refusal(self.command, self.headers.get, (str(host), int(port)))
        if refused is None:
            return True
        self.close_connection = True
        self.send_error_json(refused.status, refused.message)
        return False

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests run many requests
        return

    # --- answers ---------------------------------------------------------------------------
    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": message}

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", JSON_TYPE)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error_json(self, status: int, message: str) -> None:
        headers = {"Allow": ", ".join(self.ALLOWED_METHODS)} if status == 405 else None
        self.send_json(status, self.error_body(status, message), headers)

    def routes_hint(self) -> str:
        return "; endpoints: " + ", ".join(self.ROUTES) if self.ROUTES else ""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Python's own refusals (bad request line, headers, unknown method) as JSON too."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # a garbled request line: answer with headers
            self.request_version = "HTTP/1.0"
        if code == 501:  # http.server's answer to a method with no do_<METHOD>
            code = 405
            message = f"method {self.command} is not allowed{self.routes_hint()}"
        text = message or self.responses.get(code, ("error",))[0]
        try:
            self.send_error_json(code, text)
        except OSError:
            return

    def handle_one_request(self) -> None:
        self._held = 0
        try:
            super().handle_one_request()
        except HttpError as exc:
            self.close_connection = True
            self.send_error_json(exc.status, exc.message)
            if exc.status == 413:
                self._drain()
        except TimeoutError:
            self.close_connection = True  # a client that stopped sending mid-request
        finally:
            if self._held:
                self.server.body_budget.release(self._held)  # type: ignore[attr-defined]
                self._held = 0

    def _drain(self) -> None:
        try:
            left = min(int(self.headers.get("Content-Length", "0")), DRAIN_LIMIT)
            while left > 0:
                chunk = self.rfile.read(min(DRAIN_CHUNK, left))
                if not chunk:
                    return
                left -= len(chunk)
        except (OSError, ValueError):
            return

    # --- requests ----------------------------------------------------------------------------
    def read_body(self) -> bytes:
        """The body, after checking its declared length against the limit."""
        length = declared_length(
            self.headers.get("Transfer-Encoding"),
            self.headers.get("Content-Length"),
            self.MAX_BODY_BYTES,
        )
        budget = getattr(self.server, "body_budget", None)
        if budget is not None and length:
            if not budget.acquire(length, self.timeout):
                raise HttpError(503, "the server is busy with other large bodies; retry")
            self._held = length
        data = self.rfile.read(length)
        if len(data) < length:
            raise HttpError(400, f"body ended after {len(data)} of {length} declared bytes")
        return data

    def read_json(self) -> Any:
        return parse_json_body(self.read_body())

    def query_params(self, query: str, allowed: tuple[str, ...]) -> dict[str, str]:
        """Each allowed parameter at most once; any other is a 400 naming what is expected."""
        try:
            parsed = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
        except ValueError:
            raise HttpError(400, f"malformed query string {query[:80]!r}") from None
        expected = ", ".join(allowed) if allowed else "none"
        for key, values in parsed.items():
            if key not in allowed:
                raise HttpError(400, f"unknown query parameter {key[:40]!r}; expected: {expected}")
            if len(values) > 1:
                raise HttpError(400, f"give {key} at most once")
        return {key: values[0] for key, values in parsed.items()}
