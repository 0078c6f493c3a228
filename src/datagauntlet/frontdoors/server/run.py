"""Binding and running the session server (uvicorn), announcing its URL once it listens."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable

from datagauntlet.frontdoors.server.sessions import Limits, SessionStore


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(1024)
    return sock


def serve(
    host: str,
    port: int,
    limits: Limits,
    allowed_hosts: list[str],
    announce: Callable[[str], None] | None = None,
) -> None:
    try:
        import uvicorn
    except ImportError:
        raise ValueError(
            "the server needs uvicorn and starlette: pip install 'datagauntlet[server]'"
        ) from None
    from datagauntlet.frontdoors.server.app import build_app

    # Every call hops between the event loop and its episode's thread; a shorter switch interval
    # keeps a busy thread from holding the GIL 5 ms while the loop has replies to send.
    sys.setswitchinterval(0.0005)
    sock = bind(host, port)
    url = f"http://{host}:{sock.getsockname()[1]}"
    (announce or (lambda u: print(f"datagauntlet server at {u}", file=sys.stderr, flush=True)))(url)
    app = build_app(SessionStore(limits), allowed_hosts)
    # Deflate costs more CPU than the bytes it saves on loopback-sized JSON replies.
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        ws_max_size=limits.max_message_bytes,
        ws_per_message_deflate=False,
    )
    uvicorn.Server(config).run(sockets=[sock])  # run() sets up uvloop where installed
