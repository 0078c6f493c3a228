"""The listening socket: one bind for the single-process server and for every worker.

Below both `run.py` and `workers.py`, so neither imports the other for it.
"""

from __future__ import annotations

import socket

# Long enough for a call that grades (a sandboxed script, a 2 s SQL budget) to answer.
GRACEFUL_SECONDS = 10


def bind(host: str, port: int, reuse_port: bool = False, listen: bool = True) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    if listen:
        sock.listen(1024)
    return sock
