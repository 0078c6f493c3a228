"""The `serve` door under hostile requests: JSON for everything, bounded, nothing held forever."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from http_probe import LOCAL, exchange, parse, request

import datagauntlet as dg
from datagauntlet.frontdoors.serve import MAX_BODY_BYTES, EpisodeHttpServer

L = LOCAL.encode()


@pytest.fixture
def server() -> Iterator[EpisodeHttpServer]:
    env = dg.make("dirty-integration", profile="clean")
    with EpisodeHttpServer.open(env, env.tasks("eval", 1)[0], socket_timeout=1.0) as s:
        yield s


def _port(server: EpisodeHttpServer) -> int:
    return int(server.server_address[1])


@pytest.mark.parametrize(
    ("headers", "body", "status", "says"),
    [
        ({"Content-Length": "abc"}, b"{}", 400, "Content-Length must be a non-negative integer"),
        ({"Content-Length": "-1"}, b"{}", 400, "Content-Length must be a non-negative integer"),
        ({"Content-Length": str(MAX_BODY_BYTES + 1)}, b"", 413, f"limit of {MAX_BODY_BYTES}"),
        ({}, b"[" * 100_000 + b"]" * 100_000, 400, "nested too deeply"),
        ({}, b'[{"id": "a", "amount": 1}]', 400, 'a JSON object {"records": [...]}'),
        ({}, b'"records"', 400, 'a JSON object {"records": [...]}'),
        ({}, b"\xff", 400, "not valid JSON"),
    ],
)
def test_bad_submissions_get_a_json_error_and_change_nothing(
    server: EpisodeHttpServer, headers: dict[str, str], body: bytes, status: int, says: str
) -> None:
    before = server.live.run_sync(lambda ep: ep.fingerprint())
    got, _, payload = request(_port(server), "POST", "/submit", body, headers)
    assert got == status and says in payload["error"]
    assert server.live.run_sync(lambda ep: ep.fingerprint()) == before
    assert not server.live.run_sync(lambda ep: ep.done)


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/records?curser=x", "unknown query parameter 'curser'; expected: cursor"),
        ("/score?verbose=1", "unknown query parameter 'verbose'; expected: none"),
        ("/records?cursor=a&cursor=b", "at most once"),
    ],
)
def test_unknown_query_parameters_are_a_400(
    server: EpisodeHttpServer, path: str, says: str
) -> None:
    status, _, payload = request(_port(server), "GET", path)
    assert status == 400 and says in payload["error"]
    assert server.live.run_sync(lambda ep: ep.calls) == 0  # no page was served


def test_the_404_names_every_endpoint(server: EpisodeHttpServer) -> None:
    status, _, payload = request(_port(server), "GET", "/nope")
    assert status == 404
    for route in ("GET /records", "POST /submit", "GET /score"):
        assert route in payload["error"]


@pytest.mark.parametrize("method", ["DELETE", "PUT", "PATCH", "HEAD", "OPTIONS", "BREW"])
def test_every_method_answers_json(server: EpisodeHttpServer, method: str) -> None:
    raw = exchange(_port(server), (f"{method} /records HTTP/1.1\r\n" + LOCAL + "\r\n").encode())
    status = int(raw.split()[1])
    assert status == 405
    if method != "HEAD":
        assert "GET /records" in parse(raw)[2]["error"]


def test_a_wrong_method_on_a_known_path_is_a_405(server: EpisodeHttpServer) -> None:
    status, headers, payload = request(_port(server), "POST", "/records", b"{}")
    assert status == 405 and headers["allow"] == "GET" and "GET /records" in payload["error"]


def test_a_short_body_or_silent_client_frees_its_thread(server: EpisodeHttpServer) -> None:
    start = time.monotonic()
    head = b"POST /submit HTTP/1.1\r\n" + L + b"Content-Length: 1000\r\n\r\n{"
    raw = exchange(_port(server), head, timeout=10, half_close=False)
    assert time.monotonic() - start < 5
    assert raw == b"" or parse(raw)[0] in (400, 408)
    status, _, payload = request(_port(server), "POST", "/submit", b"{", {"Content-Length": "9"})
    assert status == 400 and "ended after 1 of 9" in payload["error"]
    assert request(_port(server), "GET", "/score")[0] == 409  # answered: not over yet


def test_a_burst_of_connections_is_all_answered(server: EpisodeHttpServer) -> None:
    statuses: list[int] = []
    lock = threading.Lock()

    def one() -> None:
        try:
            status = request(_port(server), "GET", "/score", timeout=20)[0]
        except (OSError, ValueError):
            status = 0
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=one) for _ in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert statuses.count(409) == 200  # every one answered (the score waits for the end)


def test_a_port_in_use_is_one_clear_error() -> None:
    env = dg.make("dirty-integration")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        with pytest.raises(ValueError, match="already in use"):
            EpisodeHttpServer.open(env, env.tasks("eval", 1)[0], port=port)
