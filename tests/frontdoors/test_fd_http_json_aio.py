"""The asyncio JSON door (http_json_aio): many open connections, keep-alive, and the rules it
shares with the stdlib doors under requests that bend them."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from http_probe import LOCAL, exchange, parse, request

from datagauntlet.frontdoors.http_json_aio import AioJsonServer, JsonReply, Reply, Request

L = LOCAL.encode()


class Echo(AioJsonServer):
    """Answers a POST with the length of its body, a GET with its path."""

    MAX_BODY_BYTES = 1000
    ROUTES = ("POST /echo", "GET /anything")

    async def respond(self, request: Request) -> Reply:
        if request.method == "GET":
            return JsonReply(200, {"path": request.path, "query": request.query})
        return JsonReply(200, {"length": len(await request.read_body())})


@pytest.fixture
def echo() -> Iterator[Echo]:
    server = Echo("127.0.0.1", 0, socket_timeout=1.0).start()
    yield server
    server.stop()


def _read_answers(sock: socket.socket, n: int = 1) -> list[tuple[int, dict[str, Any]]]:
    """The next n answers on a keep-alive connection (nothing is sent after them)."""
    data, out = b"", []
    while len(out) < n:
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, data = data.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        while len(data) < length:
            data += sock.recv(65536)
        out.append((int(head.split()[1]), json.loads(data[:length])))
        data = data[length:]
    return out


def _read_answer(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    return _read_answers(sock)[0]


def test_hundreds_of_connections_each_keep_alive_for_several_requests(echo: Echo) -> None:
    port = echo.server_address[1]
    socks = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(300)]
    try:
        for round_ in range(3):
            for i, sock in enumerate(socks):
                body = b"x" * (i % 50)
                sock.sendall(
                    b"POST /echo HTTP/1.1\r\n"
                    + L
                    + b"Content-Length: %d\r\n\r\n%b" % (len(body), body)
                )
            for i, sock in enumerate(socks):
                assert _read_answer(sock) == (200, {"length": i % 50}), round_
    finally:
        for sock in socks:
            sock.close()


def test_pipelined_requests_are_answered_in_order(echo: Echo) -> None:
    port = echo.server_address[1]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"".join(
            b"POST /echo HTTP/1.1\r\n" + L + b"Content-Length: %d\r\n\r\n%b" % (n, b"y" * n)
            for n in (3, 0, 7)
        ))  # fmt: skip
        assert [a[1]["length"] for a in _read_answers(sock, 3)] == [3, 0, 7]


def test_expect_100_continue_is_answered_before_the_body_is_sent(echo: Echo) -> None:
    port = echo.server_address[1]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /echo HTTP/1.1\r\n" + L + b"Expect: 100-continue\r\nContent-Length: 5\r\n\r\n"
        )
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(b"12345")
        assert _read_answer(sock) == (200, {"length": 5})


def test_an_oversized_body_sent_whole_still_sees_its_413(echo: Echo) -> None:
    raw = exchange(
        echo.server_address[1],
        b"POST /echo HTTP/1.1\r\n" + L + b"Content-Length: 5000\r\n\r\n" + b"z" * 5000,
    )
    status, headers, payload = parse(raw)
    assert status == 413 and "limit of 1000 bytes" in payload["error"]
    assert headers["connection"] == "close"


@pytest.mark.parametrize(
    ("raw", "status", "says"),
    [
        (b"GET / HTTP/2.0\r\n\r\n", 505, "not served"),
        (b"GET / HTTP/1.x\r\n\r\n", 400, "version"),
        (b"GET /\r\n\r\n", 400, "HTTP/0.9"),
        (b"GET / HTTP/1.1 extra\r\n\r\n", 400, "request line"),
        (b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 101 + b"\r\n", 431, "too many"),
        (b"GET / HTTP/1.1\r\nX-Long: " + b"y" * 70_000 + b"\r\n\r\n", 431, "head over"),
        (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400, "malformed header"),
        (b"GET / HTTP/1.1\r\n" + L + b" folded\r\n\r\n", 400, "malformed header"),
        (b"BREW / HTTP/1.1\r\n\r\n", 405, "BREW"),
        (
            b"POST /echo HTTP/1.1\r\n" + L + b"Content-Length: 1e3\r\n\r\n",
            400,
            "non-negative integer",
        ),
        (
            b"POST /echo HTTP/1.1\r\n" + L + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            411,
            "chunked",
        ),
        (b"POST /echo HTTP/1.1\r\n" + L + b"\r\n", 411, "Content-Length"),
        (
            b"POST /echo HTTP/1.1\r\n" + L + b"Content-Length: 10\r\n\r\nabc",
            400,
            "ended after 3 of 10",
        ),
    ],
)
def test_bent_requests_get_a_json_error_and_a_close(
    echo: Echo, raw: bytes, status: int, says: str
) -> None:
    got, headers, payload = parse(exchange(echo.server_address[1], raw))
    assert got == status and says in payload["error"], payload
    assert headers["connection"] == "close"
    assert request(echo.server_address[1], "GET", "/anything")[0] == 200  # still serving


def test_head_gets_its_405_without_a_body(echo: Echo) -> None:
    raw = exchange(echo.server_address[1], b"HEAD /anything HTTP/1.1\r\n" + L + b"\r\n")
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 405") and b"Allow: GET, POST" in head and body == b""


def test_a_silent_client_is_dropped_after_the_socket_timeout(echo: Echo) -> None:
    start = time.monotonic()
    raw = exchange(echo.server_address[1], b"GET /anything HTT", timeout=10, half_close=False)
    assert raw == b"" and time.monotonic() - start < 5


def test_bodies_in_flight_share_one_maximal_body_of_budget() -> None:
    """Two bodies of the whole budget: while the first trickles in, the second waits for it and
    gets a 503 after the socket timeout; once the first is done, a third is served."""
    server = Echo("127.0.0.1", 0, socket_timeout=1.0).start()
    port = server.server_address[1]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as first:
            first.sendall(b"POST /echo HTTP/1.1\r\n" + L + b"Content-Length: 1000\r\n\r\n")
            got: list[int] = []
            second = threading.Thread(target=lambda: got.append(request(
                port, "POST", "/echo", b"b" * 1000, timeout=10)[0]))  # fmt: skip
            second.start()
            for _ in range(8):  # a byte every 0.25 s: the first never goes silent
                first.sendall(b"a")
                time.sleep(0.25)
            second.join(10)
            assert got == [503]
            first.sendall(b"a" * 992)
            assert _read_answer(first) == (200, {"length": 1000})
        assert request(port, "POST", "/echo", b"c" * 1000)[2] == {"length": 1000}
    finally:
        server.stop()


def test_a_port_in_use_is_one_clear_error() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        with pytest.raises(ValueError, match=f"127.0.0.1:{port}: the address is already in use"):
            Echo("127.0.0.1", port)
