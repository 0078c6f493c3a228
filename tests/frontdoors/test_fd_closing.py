"""Every door closes the episodes it opens: 100 rollouts each, failures included, then count.

Counted after the rollouts: SQLite connections still open (every `sqlite3.connect` is
recorded), episodes not closed, temp dirs left in a private temp root, and threads (each live
episode has one). bad-batch-gate holds SQLite warehouses; dirty-integration is the env with
a native HTTP API.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core.episode import Episode
from datagauntlet.frontdoors.loop import Reply
from datagauntlet.frontdoors.models import PolicyModel

ROLLOUTS = 100


class Resources:
    """What episodes opened since the fixture started, and whether it was all given back."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
        self.connections: list[sqlite3.Connection] = []
        self.episodes: list[Episode[Any]] = []
        self.tmp = tmp
        connect, open_episode = sqlite3.connect, Episode._open

        def record_connection(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            conn = connect(*args, **kwargs)
            self.connections.append(conn)
            return conn

        def record_episode(ep: Episode[Any]) -> None:
            self.episodes.append(ep)
            open_episode(ep)

        monkeypatch.setattr(sqlite3, "connect", record_connection)
        monkeypatch.setattr(Episode, "_open", record_episode)
        monkeypatch.setattr(tempfile, "tempdir", str(tmp))
        self.threads = threading.active_count()

    def open_connections(self) -> int:
        still = 0
        for conn in self.connections:
            try:
                conn.execute("select 1")
                still += 1
            except sqlite3.ProgrammingError:  # closed
                pass
        return still

    def assert_all_released(self, episodes: int, connections: bool = True) -> None:
        assert len(self.episodes) >= episodes
        deadline = time.monotonic() + 10  # a world freed without waiting closes on its thread
        while any(not ep.closed for ep in self.episodes) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [ep for ep in self.episodes if not ep.closed] == []
        deadline = time.monotonic() + 10  # released threads finish their queue, then exit
        while threading.active_count() > self.threads and time.monotonic() < deadline:
            time.sleep(0.05)
        assert threading.active_count() <= self.threads
        # Probed only now: `closed` is set before a world's connection is closed on its own
        # thread, and touching a connection while another thread closes it can crash SQLite.
        if connections:
            assert self.connections, "the env opened no SQLite connection: nothing was counted"
        assert self.open_connections() == 0
        assert list(self.tmp.iterdir()) == []


@pytest.fixture
def resources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Resources]:
    root = tmp_path / "tmp"
    root.mkdir()
    yield Resources(monkeypatch, root)


class FailsSometimes:
    """The reference policy as a model; in every other rollout the endpoint goes away at the
    third turn (each rollout reaches its third turn exactly once)."""

    def __init__(self, env: dg.Environment) -> None:
        self.inner = PolicyModel(env.policies()[env.reference])
        self.third_turns = 0

    async def complete(self, messages: list[Any], tools: list[Any]) -> Reply:
        if sum(m["role"] == "assistant" for m in messages) == 2:
            self.third_turns += 1
            if self.third_turns % 2:
                raise ConnectionError("the endpoint went away")
        return await self.inner.complete(messages, tools)


def test_eval_closes_every_episode(resources: Resources, tmp_path: Path) -> None:
    from datagauntlet.frontdoors.evaluate import EvalSpec, run_eval

    env = dg.make("bad-batch-gate")
    spec = EvalSpec(n=ROLLOUTS // 4, rollouts=4, concurrency=8, label="x")  # 32 tasks a split
    out = asyncio.run(run_eval(env, spec, FailsSometimes(env), tmp_path / "out"))
    statuses = [r["status"] for r in out.records]
    assert len(statuses) == ROLLOUTS and statuses.count("failed") == ROLLOUTS // 2
    resources.assert_all_released(ROLLOUTS)


def test_mcp_closes_its_episode_however_the_server_stops(resources: Resources) -> None:
    from mcp import Client

    from datagauntlet.frontdoors.mcp_server import build_server, episode_tools

    env = dg.make("bad-batch-gate")

    async def session(tools: Any, index: int) -> None:
        async with Client(build_server(tools, "t")) as client:
            await client.call_tool("list_batches", {})
            if index % 2 == 0:
                await client.call_tool("submit_report", {"loaded": [], "quarantined": []})

    for index in range(ROLLOUTS):
        try:
            with episode_tools(env, env.tasks("eval", 1)[0]) as tools:
                asyncio.run(session(tools, index))
                if index % 2:
                    raise KeyboardInterrupt  # the server is stopped mid-episode
        except KeyboardInterrupt:
            pass
    resources.assert_all_released(ROLLOUTS)


def test_verifiers_frees_every_world(resources: Resources, mock_model: Any) -> None:
    pytest.importorskip("verifiers.v1")
    from test_fd_vf_rollouts import load_tasks, run_agent

    from datagauntlet.frontdoors.vf.tool_server import tool_server
    from datagauntlet.frontdoors.vf.worlds import WORLDS

    env = dg.make("bad-batch-gate")
    server = mock_model(env, "naive")
    tool_server()  # the process's one server thread
    resources.threads = threading.active_count()  # counted after the servers' own threads
    live = len(WORLDS)
    tasks = load_tasks("bad-batch-gate", ROLLOUTS // 4) * 2  # the split has 32 tasks
    traces = run_agent(server.base_url, "naive", "bad-batch-gate", tasks, 1000)
    # an endpoint that is gone: the rollout fails, and its world is freed all the same
    traces += run_agent("http://127.0.0.1:9/v1", "naive", "bad-batch-gate", tasks, 1000)
    assert sum(1 for t in traces if t.errors == []) == ROLLOUTS // 2
    assert len(WORLDS) == live
    resources.assert_all_released(ROLLOUTS)


def test_the_serve_door_closes_its_episode(resources: Resources) -> None:
    from datagauntlet.frontdoors.serve import EpisodeHttpServer

    env = dg.make("dirty-integration")
    for index in range(ROLLOUTS):
        with EpisodeHttpServer.open(env, env.tasks("eval", 1)[0]) as server:
            with urllib.request.urlopen(f"{server.url}/records", timeout=10) as resp:
                assert resp.status == 200
            if index % 2:
                continue
            req = urllib.request.Request(
                f"{server.url}/submit",
                data=b'{"records": []}',
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=10) as resp:
                assert resp.status == 200
    resources.assert_all_released(ROLLOUTS, connections=False)


def test_the_scripted_model_leaves_no_episode_open(resources: Resources, mock_model: Any) -> None:
    import json

    env = dg.make("dataclean")
    server = mock_model(env, final_answer=True)
    resources.threads = threading.active_count()
    body = json.dumps(
        {"model": "default", "messages": [{"role": "user", "content": "hi"}]}
    ).encode()
    for _ in range(ROLLOUTS):
        req = urllib.request.Request(
            f"{server.base_url}/chat/completions",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 200
    resources.assert_all_released(0, connections=False)  # it never needs a world
