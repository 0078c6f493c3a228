"""The scripted model server under hostile requests: every answer JSON, nothing held forever."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from http_probe import LOCAL, exchange, parse, request

import datagauntlet as dg
from datagauntlet.frontdoors.mock_model import MockModelServer

CHAT = "/v1/chat/completions"


@pytest.fixture
def server() -> Iterator[MockModelServer]:
    with MockModelServer(dg.make("dirty-integration"), socket_timeout=1.0) as s:
        yield s


def _opening(model: str) -> bytes:
    env = dg.make("dirty-integration")
    ep = env.episode(env.tasks("eval", 1)[0])
    return json.dumps({"model": model, "messages": [
        {"role": "system", "content": ep.system_prompt}, {"role": "user", "content": ep.prompt}],
        "tools": ep.tool_specs}).encode()  # fmt: skip


@pytest.mark.parametrize(
    ("headers", "body", "status", "says"),
    [
        ({"Content-Length": "abc"}, b"{}", 400, "Content-Length must be a non-negative integer"),
        ({"Content-Length": "-1"}, b"{}", 400, "Content-Length must be a non-negative integer"),
        ({"Content-Length": str(10**12)}, b"{}", 413, "limit of"),
        ({"Transfer-Encoding": "chunked"}, b"0\r\n\r\n", 411, "Content-Length"),
        ({}, b"[" * 100_000 + b"]" * 100_000, 400, "nested too deeply"),
        ({}, b'{"stream": true, "stream_options": [1], "messages": []}', 400, "stream_options"),
        ({}, b'{"model": "gpt-typo", "messages": []}', 404, "gpt-typo"),
        ({}, b"\xff\xfe", 400, "not valid JSON"),
        ({}, b"[1]", 400, "JSON object"),
    ],
)
def test_bad_bodies_get_a_json_error(
    server: MockModelServer, headers: dict[str, str], body: bytes, status: int, says: str
) -> None:
    got, _, payload = request(server.port, "POST", CHAT, body, headers)
    assert got == status
    assert says in payload["error"]["message"]


def test_unknown_model_lists_what_is_served(server: MockModelServer) -> None:
    status, _, payload = request(server.port, "POST", CHAT, b'{"model": "x", "messages": []}')
    assert status == 404
    for name in ("default", "careful", "naive"):
        assert name in payload["error"]["message"]
    assert server.requests == 0


def test_default_model_plays_the_default_policy(server: MockModelServer) -> None:
    status, _, payload = request(server.port, "POST", CHAT, _opening("default"))
    assert status == 200 and payload["model"] == server.default


@pytest.mark.parametrize("method", ["DELETE", "PUT", "PATCH", "OPTIONS", "BREW"])
def test_every_method_answers_json(server: MockModelServer, method: str) -> None:
    status, headers, payload = request(server.port, method, CHAT, b"")
    assert status == 405 and "GET" in headers["allow"]
    assert method in payload["error"]["message"]


def test_unknown_paths_and_garbage_lines_answer_json(server: MockModelServer) -> None:
    status, _, payload = request(server.port, "GET", "/nope")
    assert status == 404 and "/v1/chat/completions" in payload["error"]["message"]
    raw = exchange(server.port, b"GET / HTTP/7.3\r\n\r\n")
    assert parse(raw)[0] == 505
    raw = exchange(server.port, b"GET /v1/models HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"\r\n")
    assert parse(raw)[0] == 431


def test_a_short_body_or_silent_client_frees_its_thread(server: MockModelServer) -> None:
    start = time.monotonic()
    head = (f"POST {CHAT} HTTP/1.1\r\n" + LOCAL + "Content-Length: 1000\r\n\r\n{").encode()
    raw = exchange(server.port, head, timeout=10, half_close=False)  # then silence
    assert time.monotonic() - start < 5  # the 1 s socket timeout closed it
    assert raw == b"" or parse(raw)[0] in (400, 408)
    status, _, payload = request(server.port, "POST", CHAT, b"{", {"Content-Length": "1000"})
    assert status == 400 and "ended after 1 of 1000" in payload["error"]["message"]
    assert request(server.port, "GET", "/health")[0] == 200


def test_a_burst_of_connections_is_all_answered(server: MockModelServer) -> None:
    statuses: list[int] = []
    lock = threading.Lock()

    def one() -> None:
        try:
            status = request(server.port, "GET", "/health", timeout=20)[0]
        except (OSError, ValueError):
            status = 0
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=one) for _ in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert statuses.count(200) == 200


def test_a_port_in_use_is_one_clear_error() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        with pytest.raises(ValueError, match=f"127.0.0.1:{port}: the address is already in use"):
            MockModelServer(dg.make("dirty-integration"), port=port)
