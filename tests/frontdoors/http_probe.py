"""Raw-socket HTTP probes for hostile-input tests of the standard-library doors."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

# What a local client's request head carries: a loopback Host and a JSON body type (the
# origin guard refuses others before reading a byte of the body).
LOCAL = "Host: 127.0.0.1\r\nContent-Type: application/json\r\n"


def exchange(port: int, data: bytes, timeout: float = 10.0, half_close: bool = True) -> bytes:
    """Send `data` to 127.0.0.1:port and read until the server closes (or `timeout`)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def parse(raw: bytes) -> tuple[int, dict[str, str], Any]:
    """(status, headers, JSON body) of the first response in `raw`; the body must be JSON."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    length = int(headers.get("content-length", len(body)))
    return status, headers, json.loads(body[:length])


def request(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    **kw: Any,
) -> tuple[int, dict[str, str], Any]:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    if body is not None and not any(k.lower() == "content-type" for k in headers or {}):
        lines.append("Content-Type: application/json")
    for key, value in (headers or {}).items():
        lines.append(f"{key}: {value}")
    if body is not None and not any(k.lower() == "content-length" for k in headers or {}):
        lines.append(f"Content-Length: {len(body)}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")
    return parse(exchange(port, data, **kw))
