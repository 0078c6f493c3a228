"""Who may talk to a local server: the one check every door makes before it reads a request.

A page in the user's browser can reach a server on 127.0.0.1 in two ways: directly (a
cross-site `fetch`, form or WebSocket, which carries the page's `Origin`), or under a name the
page's owner controls and points at 127.0.0.1 (DNS rebinding, which carries that name as
`Host`). So every server the package starts refuses, before anything else:

- a `Host` that is not a loopback name (127.0.0.1, localhost, [::1]) or the address the server
  is bound to, on the server's own port, nor a name the operator allowed (`--allow-host NAME`,
  any port, or `NAME:PORT`); a request with no Host at all (403);
- an `Origin` that is not the server's own (`http://` + an allowed Host), nor one the operator
  allowed (`--allow-origin URL`); `Origin: null` (sandboxed frames, `file:` pages) too (403).
  Clients that are not browsers send no Origin and are not asked for one;
- a POST, PUT or PATCH, or any request with a body, whose `Content-Type` is not JSON (415):
  a form or a `text/plain` fetch reaches a server without the browser asking it first, a JSON
  one does not.

Standard library only. The threaded doors (http_json), the asyncio door (http_json_aio) and
the ASGI apps (`GuardedApp`, and the session server's front) all ask `Guard.refusal`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = ("", "0.0.0.0", "::", "[::]")
BODY_METHODS = ("POST", "PUT", "PATCH")
_HOST = re.compile(r"(?:\*\.)?[A-Za-z0-9.-]+(?::\d{1,5})?|\[[0-9A-Fa-f:.]+\](?::\d{1,5})?")
_ORIGIN = re.compile(r"https?://(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?")

Header = Callable[[str], "str | None"]  # a header's value by lower-case name, None if absent


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str


def check_allowed_host(text: str) -> str:
    """An `--allow-host` value: NAME, NAME:PORT, [V6]:PORT or *.SUFFIX (ValueError if not)."""
    if not _HOST.fullmatch(text):
        raise ValueError(
            f"--allow-host takes a host name or address such as lab.internal or "
            f"lab.internal:8300, got {text!r}"
        )
    return text.lower()


def check_allowed_origin(text: str) -> str:
    """An `--allow-origin` value: scheme://host[:port], as a browser sends it."""
    if not _ORIGIN.fullmatch(text):
        raise ValueError(
            f"--allow-origin takes an origin such as http://localhost:3000, got {text!r}"
        )
    return text.lower()


def split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a Host header value; None when it is not one."""
    text = value.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        name, rest = text[: end + 1], text[end + 1 :]
        if end < 0:
            return None
    else:
        name, sep, port_text = text.partition(":")
        rest = sep + port_text
    if not rest:
        return (name, None) if name else None
    if rest[0] != ":" or not rest[1:].isdigit() or len(rest) > 6:
        return None
    return (name, int(rest[1:])) if name else None


def _literal(address: str) -> str | None:
    """The bound address as a Host name, if it is a specific IP address (not a wildcard)."""
    if address in WILDCARDS:
        return None
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return None
    return f"[{ip}]" if ip.version == 6 else str(ip)


def is_json_type(value: str | None) -> bool:
    kind = (value or "").partition(";")[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


class Guard:
    """The Host, Origin and Content-Type rules of one server (see the module's doc)."""

    def __init__(self, allow_hosts: Iterable[str] = (), allow_origins: Iterable[str] = ()) -> None:
        self.any_port: set[str] = set()
        self.exact: set[tuple[str, int]] = set()
        self.suffixes: list[str] = []
        for entry in (check_allowed_host(h) for h in allow_hosts):
            parsed = split_host(entry.removeprefix("*."))
            assert parsed is not None
            if entry.startswith("*."):
                self.suffixes.append("." + parsed[0])
            elif parsed[1] is None:
                self.any_port.add(parsed[0])
            else:
                self.exact.add(parsed)
        self.origins = {check_allowed_origin(o) for o in allow_origins}
        self.hint_hosts = ", ".join(LOOPBACK_NAMES)

    def _allowed(self, name: str, port: int | None, server: tuple[str, int | None]) -> bool:
        """Whether (name, port) is this server or a name the operator added; `port` None is
        a Host without one (non-browser clients send that: a browser always names the port
        it connected to, unless it is the scheme's default)."""
        bound, bound_port = server
        if name in self.any_port or any(name.endswith(s) for s in self.suffixes):
            return True
        if (name, 80 if port is None else port) in self.exact:
            return True
        own = name in LOOPBACK_NAMES or name == _literal(bound)
        return own and (bound_port is None or port is None or port == bound_port)

    def origin_allowed(self, origin: str, server: tuple[str, int | None]) -> bool:
        text = origin.strip().lower()
        if text in self.origins:
            return True
        scheme, sep, authority = text.partition("://")
        parsed = split_host(authority) if sep else None
        if scheme not in ("http", "https") or parsed is None:
            return False
        name, port = parsed
        if name in self.any_port or any(name.endswith(s) for s in self.suffixes):
            return True
        # an origin always has a port: the scheme's default when it names none, so a page
        # served on another port of this machine is another origin
        if scheme == "https":  # this server speaks plain HTTP: an https page is another one
            return False
        return self._allowed(name, 80 if port is None else port, server)

    def refusal(
        self, method: str, header: Header, server: tuple[str, int | None], websocket: bool = False
    ) -> Refusal | None:
        """Why this request is refused, or None when it may be served. `server` is the bound
        (address, port); a port of None accepts a loopback Host on any port."""
        host = header("host")
        parsed = split_host(host) if host is not None else None
        if parsed is None or not self._allowed(parsed[0], parsed[1], server):
            shown = "none" if host is None else repr(host[:100])
            port = "its own port" if server[1] is None else f"port {server[1]}"
            return Refusal(
                403,
                f"Host {shown} is refused: this server answers {self.hint_hosts} on {port} "
                "(start it with --allow-host NAME to add a name)",
            )
        origin = header("origin")
        if origin is not None and not self.origin_allowed(origin, server):
            return Refusal(
                403,
                f"Origin {origin[:100]!r} is refused: only this server's own pages may call it "
                "(start it with --allow-origin URL to add one)",
            )
        if websocket:
            return None
        length = header("content-length")
        has_body = header("transfer-encoding") is not None or length not in (None, "0")
        if (method in BODY_METHODS or has_body) and not is_json_type(header("content-type")):
            shown = header("content-type")
            return Refusal(
                415,
                f"Content-Type {'none' if shown is None else repr(shown[:100])} is refused: "
                f"a {method} body must be JSON, sent as application/json",
            )
        return None


def asgi_header(scope: dict[str, Any]) -> Header:
    """Header lookup over an ASGI scope's raw headers (the first of a repeated name wins)."""
    found: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        found.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return found.get


def asgi_server(scope: dict[str, Any]) -> tuple[str, int | None]:
    server = scope.get("server") or ("", None)
    return (str(server[0]), server[1] if isinstance(server[1], int) else None)


async def refuse_asgi(scope: dict[str, Any], receive: Any, send: Any, refused: Refusal) -> None:
    """Answer a refused ASGI request: a JSON error over HTTP; over WebSocket the handshake is
    refused with that status and body where the server can say so, else closed (403)."""
    import json

    body = json.dumps({"error": refused.message, "status": refused.status}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if scope["type"] == "websocket":
        await receive()  # websocket.connect
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": 1008})
            return
        prefix = "websocket.http.response"
        await send({"type": f"{prefix}.start", "status": refused.status, "headers": headers})
        await send({"type": f"{prefix}.body", "body": body})
        return
    await send({"type": "http.response.start", "status": refused.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def asgi_refusal(guard: Guard, scope: dict[str, Any]) -> Refusal | None:
    kind = scope["type"]
    if kind not in ("http", "websocket"):
        return None
    return guard.refusal(
        scope.get("method", "GET"), asgi_header(scope), asgi_server(scope), kind == "websocket"
    )


class GuardedApp:
    """An ASGI app behind the guard (the MCP door, the verifiers tool server)."""

    def __init__(self, app: Any, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        refused = asgi_refusal(self.guard, scope)
        if refused is not None:
            await refuse_asgi(scope, receive, send, refused)
            return
        await self.app(scope, receive, send)
