"""`serve`: the same API over real HTTP, scored exactly as in process."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

import datagauntlet as dg
from datagauntlet.core.runner import play
from datagauntlet.frontdoors.serve import EpisodeHttpServer


def _request(
    url: str, body: Any = None, timeout: float = 10.0
) -> tuple[int, dict[str, Any], dict[str, str]]:
    data = None if body is None else json.dumps(body).encode()
    headers = {} if data is None else {"Content-Type": "application/json"}
    req = urllib.request.Request(
        url, data=data, method="POST" if data is not None else "GET", headers=headers
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), dict(err.headers)


class HttpEpisode:
    """What a policy needs of an episode, spoken over HTTP to a running server."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.statuses: list[int] = []

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "fetch_page":
            cursor = args["cursor"]
            query = "" if cursor is None else f"?cursor={quote(cursor)}"
            status, body, _ = _request(f"{self.base}/records{query}")
        else:
            status, body, _ = _request(f"{self.base}/submit", args)
        self.statuses.append(status)
        return body


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[EpisodeHttpServer] = []

    def start(profile: str, index: int = 0, stall: float = 0.01) -> EpisodeHttpServer:
        env = dg.make("dirty-integration", profile=profile, http_timeout_seconds=stall)
        server = EpisodeHttpServer.open(env, env.tasks("eval", index + 1)[index]).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()
        assert server.live.ep.closed


@pytest.mark.parametrize("profile", ["realistic", "hostile"])
@pytest.mark.parametrize("policy", ["naive", "stubborn", "careful"])
def test_http_score_equals_in_process_score(serve: Any, profile: str, policy: str) -> None:
    env = dg.make("dirty-integration", profile=profile)
    for index in range(3):
        server = serve(profile, index)
        client = HttpEpisode(server.url)
        env.policies()[policy](client)  # type: ignore[arg-type]
        status, remote, _ = _request(f"{server.url}/score")
        local = play(env, policy, env.tasks("eval", index + 1)[index])
        assert status == 200
        assert remote["reward"] == local.reward
        assert remote["metrics"] == local.metrics


def test_quota_is_a_real_429_without_retry_after(serve: Any) -> None:
    server = serve("realistic")
    quota = server.live.ep.world.quota
    statuses = []
    for _ in range(quota + 2):
        status, body, headers = _request(f"{server.url}/records")
        statuses.append(status)
    assert statuses[-2:] == [429, 429]
    assert "Retry-After" not in headers and body["status"] == 429


def test_a_timeout_is_a_real_stall(serve: Any) -> None:
    server = serve("hostile", stall=0.3)
    world = server.live.ep.world
    first_timeout = next(r for r in range(world.quota) if world.faults(r).timeout)
    for _ in range(first_timeout):
        _request(f"{server.url}/records")
    start = time.monotonic()
    status, body, _ = _request(f"{server.url}/records")
    assert status == 504 and "records" not in body
    assert time.monotonic() - start >= 0.3
    # a client that gives up sooner sees a socket timeout, as with a real gateway
    server2 = serve("hostile", stall=1.0)
    for _ in range(first_timeout):
        _request(f"{server2.url}/records")
    with pytest.raises(TimeoutError):
        _request(f"{server2.url}/records", timeout=0.2)


def test_bad_requests_get_clear_http_errors(serve: Any) -> None:
    server = serve("clean")
    assert _request(f"{server.url}/records?cursor=forged")[0] == 400
    assert _request(f"{server.url}/records?cursor=a&cursor=b")[0] == 400
    assert _request(f"{server.url}/nope")[0] == 404
    req = urllib.request.Request(
        f"{server.url}/submit",
        data=b"{broken",
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=5)
    assert err.value.code == 400
    assert _request(f"{server.url}/submit", {"records": []})[0] == 200
    assert _request(f"{server.url}/submit", {"records": []})[0] == 409
    assert server.live.ep.api.requests == 0  # nothing bad reached the API
