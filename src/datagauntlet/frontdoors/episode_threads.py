"""Threads for live episodes: one thread per episode while it lives, reused by the next one.

An episode's steps must run in order on one thread (a SQLite connection is tied to the thread
that opened it). A `ThreadPoolExecutor(max_workers=1)` per episode gives that, but every
`submit` of every executor in the process takes one global lock, and an executor starting its
thread holds that lock until the new thread runs: on a loaded machine, one session opening
stalled every other session's call behind it. Here a step is handed over on a `SimpleQueue`
(no shared lock), and a closed episode's thread goes back to a free list, so a server that
opens and closes sessions all day starts threads only when more episodes live at once than
ever before. A thread left idle for `LINGER_SECONDS` exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future
from queue import Empty, SimpleQueue
from typing import Any, TypeVar

T = TypeVar("T")

LINGER_SECONDS = 2.0
_RELEASE = object()
_free: list[EpisodeThread] = []
_free_lock = threading.Lock()


def _settle(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if not fut.done():
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)


class EpisodeThread:
    """One thread running the work handed to it in order. Take one with `acquire()`; give it
    back with `shutdown()` (after the work already handed over)."""

    def __init__(self) -> None:
        self._queue: SimpleQueue[Any] = SimpleQueue()
        self._idle = False
        self._thread = threading.Thread(target=self._run, name="dg-episode", daemon=True)
        self._thread.start()

    @staticmethod
    def acquire() -> EpisodeThread:
        """A free thread, or a new one (starting a thread waits for it: keep that off a loop)."""
        with _free_lock:
            if _free:
                worker = _free.pop()
                worker._idle = False
                return worker
        return EpisodeThread()

    @staticmethod
    def take_free() -> EpisodeThread | None:
        """A free thread if there is one; never starts a thread."""
        with _free_lock:
            if _free:
                worker = _free.pop()
                worker._idle = False
                return worker
        return None

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._queue.put((fn, args, future, None))
        return future

    def submit_async(
        self, loop: asyncio.AbstractEventLoop, fn: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        """The same, for a caller on `loop`: one wake-up of the loop when the work is done."""
        future: asyncio.Future[T] = loop.create_future()
        self._queue.put((fn, args, future, loop))
        return future

    def shutdown(self, wait: bool = True) -> None:
        """Back to the free list once the work handed over so far is done."""
        self._queue.put(_RELEASE)

    def _run(self) -> None:
        queue = self._queue
        while True:
            try:
                item = queue.get(timeout=LINGER_SECONDS) if self._idle else queue.get()
            except Empty:
                with _free_lock:
                    if self._idle:  # still unclaimed: leave
                        _free.remove(self)
                        return
                continue  # claimed just now: its owner's work is on the way
            if item is _RELEASE:
                with _free_lock:
                    self._idle = True
                    _free.append(self)
                continue
            self._do(item)
            del item  # an idle thread must not keep the last episode's objects alive

    @staticmethod
    def _do(item: tuple[Any, ...]) -> None:
        fn, args, future, loop = item
        del item
        if loop is None and not future.set_running_or_notify_cancel():
            return
        try:
            ok, value = True, fn(*args)
        except BaseException as exc:
            ok, value = False, exc
        # A failure's traceback keeps this frame alive as long as the exception lives: the
        # frame must not keep the call's inputs (a 24 MB request body) with it.
        fn = args = None
        if loop is None:
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
        else:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting
                loop.call_soon_threadsafe(_settle, future, ok, value)
        future = value = None
