"""The session server's worlds share one memory budget: a session whose world would take the
worlds held past it is refused, at every door that opens sessions, with a message naming the
budget; closing, reaping or stopping gives the bytes back."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from server_helpers import Server

import datagauntlet as dg
from datagauntlet.frontdoors.server.sessions import LimitReached, Limits, SessionStore

WORLD = dg.make("dirty-integration").world_bytes()  # one default dirty-integration world


def test_a_session_past_the_budget_is_refused_and_a_close_lets_one_in() -> None:
    budget = 2 * WORLD + WORLD // 2  # room for two worlds, not three
    s = Server("--max-world-bytes", str(budget), "--workers", "2")
    try:
        opened = [s.request("POST", "/sessions", {"env": "dirty-integration"}) for _ in range(2)]
        assert [status for status, _ in opened] == [201, 201]
        assert s.request("GET", "/health")[1]["world_bytes"] == 2 * WORLD
        status, reply = s.request("POST", "/sessions", {"env": "dirty-integration"})
        assert status == 429 and "memory budget reached" in reply["error"], reply
        assert "--max-world-bytes" in reply["error"] and "\n" not in reply["error"]
        status, reply = s.request("POST", "/openenv/dirty-integration/reset", {"task": 2})
        assert status == 429 and "memory budget reached" in reply["error"]
        from websockets.sync.client import connect

        with connect(f"ws://127.0.0.1:{s.port}/ws") as ws:
            ws.send(json.dumps({"op": "open", "env": "dirty-integration"}))
            reply = json.loads(ws.recv(timeout=30))
            assert reply["status"] == 429 and "memory budget reached" in reply["error"]
        with connect(f"ws://127.0.0.1:{s.port}/openenv/dirty-integration/ws") as ws:
            ws.send(json.dumps({"type": "reset", "data": {}}))
            reply = json.loads(ws.recv(timeout=30))
            assert reply["type"] == "error" and reply["data"]["code"] == "CAPACITY_REACHED"
            assert "memory budget reached" in reply["data"]["message"]
        health = s.request("GET", "/health")[1]
        assert health["sessions"] == 2 and health["world_bytes"] == 2 * WORLD
        assert s.request("DELETE", f"/sessions/{opened[0][1]['session_id']}")[0] == 200
        assert s.request("POST", "/sessions", {"env": "dirty-integration"})[0] == 201
        big = {"env": "dirty-integration", "config": {"num_records": 100_000}}
        status, reply = s.request("POST", "/sessions", big)  # could never fit: a 400
        assert status == 400 and "more than the server's whole budget" in reply["error"]
    finally:
        err = s.stop()
    assert "Traceback" not in err, err


def test_closing_reaping_and_stopping_give_the_bytes_back() -> None:
    async def go() -> None:
        store = SessionStore(Limits(max_world_bytes=2 * WORLD, idle_seconds=0.2))
        first = await store.create("dirty-integration", {}, "eval", 0)
        await store.create("dirty-integration", {}, "eval", 1)
        with pytest.raises(LimitReached, match="memory budget reached"):
            await store.create("dirty-integration", {}, "eval", 2)
        assert store.tally.total("world_bytes") == 2 * WORLD
        await store.close(first.id)
        third = await store.create("dirty-integration", {}, "eval", 2)
        assert third.world_bytes == WORLD
        time.sleep(0.3)
        assert await store.reap() == 2 and store.tally.total("world_bytes") == 0
        for i in range(2):
            await store.create("dirty-integration", {}, "eval", i)
        await store.close_all()
        assert store.tally.total("world_bytes") == 0 and store.tally.total("held") == 0

    asyncio.run(go())


def test_a_refused_request_holds_no_bytes() -> None:
    async def go() -> None:
        store = SessionStore(Limits(max_world_bytes=WORLD))
        with pytest.raises(ValueError):
            await store.create("dirty-integration", {}, "no-such-split", 0)
        assert store.tally.total("world_bytes") == 0
        session = await store.create("dirty-integration", {}, "eval", 0)
        await store.close(session.id)

    asyncio.run(go())


def test_the_default_budget_is_half_this_machines_memory() -> None:
    from datagauntlet.frontdoors.server.sessions import memory_of_this_machine

    assert Limits().max_world_bytes == memory_of_this_machine() // 2
