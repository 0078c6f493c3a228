"""Episode threads: steps in order on one thread, errors reach the caller, a closed episode's
thread serves the next episode, and an idle one exits. Plus the server's reply encoder."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

import datagauntlet as dg
from datagauntlet.frontdoors import episode_threads
from datagauntlet.frontdoors.episode_threads import EpisodeThread
from datagauntlet.frontdoors.live import LiveEpisode
from datagauntlet.frontdoors.server.protocol import dumps


def _wait(predicate, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_work_runs_in_order_on_one_thread_from_sync_and_async_callers() -> None:
    worker = EpisodeThread.acquire()
    seen: list[tuple[int, int]] = []

    def step(i: int) -> int:
        seen.append((i, threading.get_ident()))
        return i

    async def mixed() -> list[int]:
        loop = asyncio.get_running_loop()
        futures = []
        for i in range(200):
            if i % 2:
                futures.append(worker.submit_async(loop, step, i))
            else:
                futures.append(asyncio.wrap_future(worker.submit(step, i)))
        return list(await asyncio.gather(*futures))

    assert asyncio.run(mixed()) == list(range(200))
    assert [i for i, _ in seen] == list(range(200))
    assert len({ident for _, ident in seen}) == 1 and seen[0][1] != threading.get_ident()
    worker.shutdown()


def test_an_error_in_the_work_reaches_the_caller() -> None:
    worker = EpisodeThread.acquire()

    async def fail() -> None:
        await worker.submit_async(asyncio.get_running_loop(), lambda: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        asyncio.run(fail())
    with pytest.raises(ZeroDivisionError):
        worker.submit(lambda: 1 / 0).result(10)
    assert worker.submit(lambda: 7).result(10) == 7  # and the thread lives on
    worker.shutdown()


def test_a_closed_episodes_thread_serves_the_next_episode() -> None:
    env = dg.make("bad-batch-gate")

    async def thread_of_two() -> tuple[int, int]:
        first = await LiveEpisode.open(env, env.make_task("eval", 0))
        a = await first.run(lambda ep: threading.get_ident())
        await first.close()
        worker = first._pool  # back on the free list (last in, first out) once it is done
        assert _wait(lambda: bool(episode_threads._free) and episode_threads._free[-1] is worker)
        second = await LiveEpisode.open(env, env.make_task("eval", 1))
        b = await second.run(lambda ep: threading.get_ident())
        await second.close()
        return a, b

    a, b = asyncio.run(thread_of_two())
    assert a == b


def test_an_idle_thread_exits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode_threads, "LINGER_SECONDS", 0.05)
    env = dg.make("dataclean")
    live = LiveEpisode.open_sync(env, env.make_task("eval", 0))
    ident = live.run_sync(lambda ep: threading.get_ident())

    def alive() -> bool:
        return any(t.ident == ident for t in threading.enumerate())

    assert alive()
    live.close_sync()
    assert _wait(lambda: not alive())
    assert _wait(lambda: not episode_threads._free)


@pytest.mark.parametrize(
    "value",
    [
        {"result": {"records": [{"id": "r1", "amount": "12.50"}], "next": None}, "done": False},
        {"text": "naïve — 東京 \u2028 \x00", "n": -0.0, "f": 1e-7, "t": True},
        {"big": 2**70, "neg": -(2**65)},  # past 64 bits: the json fallback
        {1: "int key", "nested": [[[]], {}], "tuple": (1, 2)},
    ],
)
def test_replies_encode_to_what_json_reads_back(value: object) -> None:
    text = dumps(value)
    assert json.loads(text) == json.loads(json.dumps(value))
    assert "\n" not in text and ", " not in text.replace("\u2028", "")
