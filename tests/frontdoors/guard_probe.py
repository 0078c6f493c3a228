"""What a foreign web page can put in a request to a local server, and raw probes that send it.

Each attack is what a browser would send on the page's behalf: a cross-site request carries
the page's Origin (`null` from a sandboxed frame or a file), a DNS-rebinding page carries its
own name as Host, and a form or a `text/plain` fetch reaches the server without asking it first.
"""

from __future__ import annotations

import http.client as httpclient
import json
import socket
from typing import Any

WS_UPGRADE = (
    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)


def foreign_headers(port: int) -> dict[str, dict[str, str]]:
    """Header sets that must be refused by a server on 127.0.0.1:port, by attack name."""
    other = 1 if port != 1 else 2
    return {
        "foreign Host": {"Host": f"evil.example:{port}"},
        "rebinding Host": {"Host": f"127.0.0.1.evil.example:{port}"},
        "loopback Host, other port": {"Host": f"127.0.0.1:{other}"},
        "foreign Origin": {"Origin": "http://evil.example"},
        "local page on another port": {"Origin": f"http://127.0.0.1:{other}"},
        "https Origin": {"Origin": f"https://127.0.0.1:{port}"},
        "null Origin": {"Origin": "null"},
    }


BODY_TYPES = {
    "text/plain": "text/plain;charset=UTF-8",
    "form": "application/x-www-form-urlencoded",
    "multipart form": "multipart/form-data; boundary=x",
    "no type": None,
}


def http(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, Any]:
    """One request with exactly these headers (Host included, when given)."""
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
        for key, value in headers.items():
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        text = resp.read()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, text.decode(errors="replace")
    finally:
        conn.close()


def ws_handshake(port: int, path: str, headers: dict[str, str]) -> tuple[int, str]:
    """(status, body) of a WebSocket opening handshake with these headers."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    if "Host" not in headers:
        head = f"Host: 127.0.0.1:{port}\r\n" + head
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\n{head}{WS_UPGRADE}\r\n".encode())
        raw = b""
        while b"\r\n\r\n" not in raw:
            chunk = sock.recv(65536)
            if not chunk:
                break
            raw += chunk
        status = int(raw.split(b" ", 2)[1])
        head_part, _, body = raw.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in head_part.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    return status, body.decode(errors="replace")


def assert_refused(status: int, reply: Any, expected: int, shown: str) -> None:
    """A refusal: the status, a one-line JSON error naming what was refused."""
    assert status == expected, (status, reply)
    message = reply["error"] if isinstance(reply, dict) else json.loads(reply)["error"]
    if isinstance(message, dict):  # the OpenAI error shape
        message = message["message"]
    assert "refused" in message and shown in message and "\n" not in message, message
