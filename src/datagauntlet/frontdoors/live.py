"""One live episode for a front door: its own thread, its calls in order, its score, its close.

Every door (eval, MCP, verifiers, the HTTP `serve` door) plays its episodes through this one
helper, so they cannot drift apart:

- The episode is made on a thread of its own, and every later step runs there too, one at a
  time, in the order the steps were asked for. An event loop shared by hundreds of rollouts
  never blocks on an env's work, and objects tied to the thread that made them (a SQLite
  connection opened with the default `check_same_thread=True`) keep working.
- The step that ends the episode (the submitting tool, a final answer, a limit) is scored right
  there, once; `Step.score` carries it, and `score()` returns the same Score afterwards.
- `close` releases the world (`Episode.close`) and then the thread, exactly once, after any
  step already queued. Steps asked for after it get an error result, never an exception.

Async callers use `call`/`answer`/`score`/`close`; threads (an HTTP server's handlers, a test)
use the `*_sync` forms. Both kinds may share one episode.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.score import Score
from datagauntlet.frontdoors.episode_threads import EpisodeThread

T = TypeVar("T")

CLOSED = {"error": "the episode is closed; no more tool calls"}


@dataclass(frozen=True)
class Step:
    """A step's result, and the episode's score when this very step ended it."""

    result: dict[str, Any]
    score: Score | None = None

    @property
    def ended(self) -> bool:
        return self.score is not None


class InlineSteps:
    """Runs each step at once on the caller's thread, for an env that declares `fast_steps`.

    A door on an event loop then pays no thread handoff per call; steps stay in order (each
    runs to its end before the next is taken) and on one thread (the loop's), as an episode's
    steps must."""

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args))
        except BaseException as exc:
            future.set_exception(exc)
        return future

    def submit_async(
        self, loop: asyncio.AbstractEventLoop, fn: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        future: asyncio.Future[T] = loop.create_future()
        try:
            future.set_result(fn(*args))
        except Exception as exc:
            future.set_exception(exc)
        return future

    def shutdown(self, wait: bool = True) -> None:
        return None


class LiveEpisode:
    """Build with `await LiveEpisode.open(env, task)` or `LiveEpisode.open_sync(env, task)`;
    `inline=True` runs the steps on the caller's thread (see InlineSteps)."""

    def __init__(self, pool: EpisodeThread | InlineSteps, ep: Episode) -> None:
        self._pool = pool
        self.ep = ep
        # read once: a door lists them on every request, and they never change
        self.tool_specs: list[dict[str, Any]] = ep.tool_specs
        self.system_prompt: str = ep.system_prompt
        self.prompt: str = ep.prompt
        self.reads_final_answer: bool = ep.reads_final_answer
        self._final: Score | None = None
        self._closed = False
        self._lock = threading.Lock()  # orders "submit a step" against "close"

    # --- making one ---------------------------------------------------------------------
    @classmethod
    async def open(cls, env: Environment, task: Task, inline: bool = False) -> LiveEpisode:
        if inline:
            return cls._make(InlineSteps(), env, task)
        # Thread.start waits until the new thread runs: done from a helper thread, that wait
        # never stalls the event loop. A free thread is taken at once.
        pool = EpisodeThread.take_free() or await asyncio.to_thread(EpisodeThread)
        try:
            return await pool.submit_async(asyncio.get_running_loop(), cls._make, pool, env, task)
        except BaseException:
            pool.shutdown(wait=False)
            raise

    @classmethod
    def open_sync(cls, env: Environment, task: Task) -> LiveEpisode:
        pool = EpisodeThread.acquire()
        try:
            return pool.submit(cls._make, pool, env, task).result()
        except BaseException:
            pool.shutdown(wait=False)
            raise

    @classmethod
    def _make(cls, pool: EpisodeThread | InlineSteps, env: Environment, task: Task) -> LiveEpisode:
        ep = env.episode(task)
        try:
            return cls(pool, ep)
        except BaseException:
            ep.close()
            raise

    # --- what runs on the episode's thread -------------------------------------------------
    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T] | None:
        with self._lock:
            if self._closed:
                return None
            return self._pool.submit(fn, *args)

    def _submit_async(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T] | None:
        with self._lock:
            if self._closed:
                return None
            return self._pool.submit_async(asyncio.get_running_loop(), fn, *args)

    def _step(self, name: Any, arguments: Any) -> Step:
        was_done = self.ep.done
        result = self.ep.call(name, arguments)
        return Step(result, self._score_if_ended(was_done))

    def _answer(self, text: str) -> Step | None:
        if not self.reads_final_answer:
            return None
        was_done = self.ep.done
        result = self.ep.final_answer(text)
        if result is None:
            return None
        return Step(result, self._score_if_ended(was_done))

    def _score_if_ended(self, was_done: bool) -> Score | None:
        if was_done or not self.ep.done:
            return None
        self._final = self.ep.score()
        return self._final

    def _score(self) -> Score:
        return self._final if self._final is not None else self.ep.score()

    # --- steps --------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.ep.done

    @property
    def closed(self) -> bool:
        return self._closed

    async def call(self, name: Any, arguments: Any = None) -> Step:
        """One tool call, exactly as the agent sent it (raw JSON text or an object)."""
        future = self._submit_async(self._step, name, arguments)
        return Step(dict(CLOSED)) if future is None else await future

    def call_sync(self, name: Any, arguments: Any = None) -> Step:
        future = self._submit(self._step, name, arguments)
        return Step(dict(CLOSED)) if future is None else future.result()

    async def answer(self, text: str) -> Step | None:
        """The agent's final message, read as the env declares (None: the env reads none)."""
        future = self._submit_async(self._answer, text)
        return None if future is None else await future

    def answer_sync(self, text: str) -> Step | None:
        future = self._submit(self._answer, text)
        return None if future is None else future.result()

    async def score(self) -> Score:
        future = self._submit_async(self._score)
        if future is None:
            raise RuntimeError("the episode is closed")
        return await future

    def score_sync(self) -> Score:
        future = self._submit(self._score)
        if future is None:
            raise RuntimeError("the episode is closed")
        return future.result()

    async def run(self, fn: Callable[[Episode], T]) -> T:
        """Anything else done with the episode (a policy playing it, a read of its log), on
        its own thread, after the steps already asked for."""
        future = self._submit_async(fn, self.ep)
        if future is None:
            raise RuntimeError("the episode is closed")
        return await future

    def run_sync(self, fn: Callable[[Episode], T]) -> T:
        future = self._submit(fn, self.ep)
        if future is None:
            raise RuntimeError("the episode is closed")
        return future.result()

    # --- closing ------------------------------------------------------------------------
    def _release(self) -> Future[None] | None:
        """Queue the world's release behind every step already asked for; stop the thread."""
        with self._lock:
            if self._closed:
                return None
            self._closed = True
            future = self._pool.submit(self.ep.close)
        self._pool.shutdown(wait=False)
        return future

    async def close(self) -> None:
        future = self._release()
        if future is not None:
            await asyncio.wrap_future(future)

    def close_sync(self) -> None:
        future = self._release()
        if future is not None:
            future.result()

    def close_nowait(self) -> None:
        """Release without waiting (an evicted world whose thread may still be busy)."""
        self._release()
