"""Run every step of one episode on one dedicated thread.

Tool calls must not block an event loop that other rollouts share, yet an episode is not
thread-safe and may hold objects tied to the thread that made them (a SQLite connection
opened with the default `check_same_thread=True`). One single-thread executor per episode
gives both: the loop stays free, and the world only ever sees one thread, one call at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class Pinned:
    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dg-episode")

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self._pool.submit(fn, *args))

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """The blocking form, for callers that are threads themselves."""
        return self._pool.submit(fn, *args).result()

    def close(self) -> None:
        self._pool.shutdown(wait=False)
