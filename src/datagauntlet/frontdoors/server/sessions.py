"""The session store: bounded, reaped when idle, one live episode per session.

A session is one episode of one env (config, split, task), played through the same
live-episode helper as every other door, so its calls run in order on its own thread and its
score is fixed by the step that ended it. Limits are hard: past `max_sessions` a new session is
refused with a message naming the limit, as is one whose world (`Environment.world_bytes`)
would take the worlds held past `max_world_bytes`; a session unused for `idle_seconds` is
closed and forgotten (its id then answers 404, like any unknown id), its bytes given back.

A server of several worker processes has one store per worker. A session id names the worker
that holds it (`"{worker}.{token}"`), and the session limit is counted across all of them in
the shared tally (tally.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.remote_config import check_remote_config
from datagauntlet.frontdoors.live import LiveEpisode, Step
from datagauntlet.frontdoors.server.tally import Tally

MIB = 1024 * 1024


def memory_of_this_machine() -> int:
    """The bytes this process may use: physical memory, or its cgroup's limit when lower."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            text = f.read(64).strip()
        if text.isdigit():
            total = min(total, int(text))
    except OSError:
        pass
    return total


def default_world_budget() -> int:
    """Half of this machine's memory: the worlds of open sessions never take the other half
    (the server's own heap, the episodes' threads, graders and sandboxed scripts need it)."""
    return max(64 * MIB, memory_of_this_machine() // 2)


@dataclass(frozen=True)
class Limits:
    max_sessions: int = 1024
    idle_seconds: float = 600.0
    max_body_bytes: int = 8 * 1024 * 1024
    max_message_bytes: int = 8 * 1024 * 1024  # one WebSocket message
    max_world_bytes: int = field(default_factory=default_world_budget)  # every worker's worlds
    # Accept every config key from clients, module and path keys included (the operator's
    # `--trust-client-config`); otherwise only the keys each env declares remote-safe.
    trust_client_config: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "max_sessions": self.max_sessions,
            "idle_seconds": self.idle_seconds,
            "max_body_bytes": self.max_body_bytes,
            "max_message_bytes": self.max_message_bytes,
            "max_world_bytes": self.max_world_bytes,
            "trust_client_config": self.trust_client_config,
        }


TRUST_HINT = "a server started with --trust-client-config accepts every key"


class LimitReached(Exception):
    """A hard limit refused the request; the message names the limit."""


class UnknownSession(KeyError):
    pass


@dataclass
class Session:
    id: str
    env: Environment
    live: LiveEpisode
    split: str
    task_index: int
    created: float
    last_used: float
    calls: int = 0
    world_bytes: int = 0  # held against the server's budget until the session is closed
    final: dict[str, Any] | None = None
    extras: dict[str, Any] = field(default_factory=dict)  # per-door state (an MCP app, ...)

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def opening(self) -> dict[str, Any]:
        """What a client needs to play: the prompts, the tools and the limits."""
        task = self.live.ep.task
        return {
            "session_id": self.id,
            "env": self.env.id,
            "config": self.env.config.as_dict(),
            "task": task.as_dict(),
            "system_prompt": self.live.system_prompt,
            "prompt": self.live.prompt,
            "tools": self.live.tool_specs,
            "reads_final_answer": self.live.reads_final_answer,
            "max_turns": getattr(self.env.config, "max_turns", None),
        }

    def describe(self) -> dict[str, Any]:
        return {
            "session_id": self.id,
            "env": self.env.id,
            "split": self.split,
            "task": self.task_index,
            "done": self.live.done,
            "calls": self.calls,
            "idle_seconds": round(time.monotonic() - self.last_used, 3),
        }

    def record(self, step: Step) -> dict[str, Any]:
        """The reply to one step: its result, and the score only if this step ended it."""
        self.calls += 1
        reply: dict[str, Any] = {"result": step.result, "done": self.live.done}
        if step.score is not None:
            self.final = step.score.as_dict()
            reply["score"] = self.final
        return reply


def owner_of(session_id: str) -> int | None:
    """The worker a session id names, or None when the id names none."""
    head, dot, _ = session_id.partition(".")
    if not dot or not head.isdigit() or len(head) > 4:
        return None
    return int(head)


class SessionStore:
    def __init__(self, limits: Limits | None = None, tally: Tally | None = None) -> None:
        self.limits = limits or Limits()
        self.tally = tally or Tally.local()
        self._sessions: dict[str, Session] = {}
        self._envs: dict[tuple[str, str], Environment] = {}
        self.created, self.reaped = self.tally.counts()

    def _publish(self) -> None:
        self.tally.publish(len(self._sessions), self.created, self.reaped)

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def env(self, env_id: str, config: dict[str, Any]) -> Environment:
        """The env of this id and config, made once (ValueError names an unknown env)."""
        import datagauntlet as dg

        key = (env_id, json.dumps(config, sort_keys=True, default=str))
        env = self._envs.get(key)
        if env is None:
            if not self.limits.trust_client_config:  # before anything is imported or opened
                check_remote_config(env_id, config, trust_hint=TRUST_HINT)
            env = dg.make(env_id, **config)  # ValueError names an unknown env or bad config
            if len(self._envs) < 256:  # configs are few; an endless variety is not cached
                self._envs[key] = env
        return env

    async def create(
        self, env_id: str, config: dict[str, Any], split: str, task_index: int
    ) -> Session:
        if task_index < 0:
            raise ValueError(f"task must be >= 0, got {task_index}")
        env = self.env(env_id, config)
        task = env.make_task(split, task_index)  # ValueError names a bad split
        need = self._world_bytes(env)
        if not self.tally.hold(self.limits.max_sessions):  # counted across every worker
            raise LimitReached(
                f"session limit reached: {self.limits.max_sessions} open sessions; close one "
                "(DELETE /sessions/ID) or wait for idle ones to be reaped "
                f"after {self.limits.idle_seconds:g} s"
            )
        used = self.tally.hold_bytes(need, self.limits.max_world_bytes)
        if used is not None:
            self.tally.release()
            raise LimitReached(
                f"memory budget reached: open sessions' worlds hold {used / MIB:,.1f} MiB of "
                f"{self.limits.max_world_bytes / MIB:,.1f} MiB (--max-world-bytes) and this "
                f"{env_id} world needs {need / MIB:,.1f} MiB; close a session (DELETE "
                f"/sessions/ID) or wait for idle ones to be reaped after "
                f"{self.limits.idle_seconds:g} s"
            )
        try:
            live = await LiveEpisode.open(env, task, inline=env.registration.fast_steps)
        except BaseException:
            self._give_back(need)
            raise
        now = time.monotonic()
        sid = f"{self.tally.index}.{secrets.token_urlsafe(18)}"
        session = Session(sid, env, live, split, task_index, now, now, world_bytes=need)
        self._sessions[session.id] = session
        self.created += 1
        self._publish()
        return session

    def _world_bytes(self, env: Environment) -> int:
        need = env.world_bytes()
        budget = self.limits.max_world_bytes
        if need > budget:  # could never fit: not worth a retry
            raise ValueError(
                f"a {env.id} world of this config needs {need / MIB:,.1f} MiB, more than the "
                f"server's whole budget of {budget / MIB:,.1f} MiB (--max-world-bytes)"
            )
        return need

    def _give_back(self, world_bytes: int, sessions: int = 1) -> None:
        self.tally.release(sessions)
        self.tally.release_bytes(world_bytes)

    def get(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise UnknownSession(session_id)
        session.touch()
        return session

    def list(self) -> list[Session]:
        return list(self._sessions.values())

    async def close(self, session_id: str) -> Session:
        session = self._sessions.pop(session_id, None)
        if session is None:
            raise UnknownSession(session_id)
        try:
            await _close(session)
        finally:
            self._give_back(session.world_bytes)
            self._publish()
        return session

    async def reap(self) -> int:
        """Close every session idle for longer than the limit."""
        cutoff = time.monotonic() - self.limits.idle_seconds
        idle = [s for s in self._sessions.values() if s.last_used < cutoff]
        for s in idle:
            self._sessions.pop(s.id, None)
            self.reaped += 1
            try:
                await _close(s)
            finally:
                self._give_back(s.world_bytes)
                self._publish()
        return len(idle)

    async def close_all(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        try:
            await asyncio.gather(*(_close(s) for s in sessions))
        finally:
            self._give_back(sum(s.world_bytes for s in sessions), len(sessions))
            self._publish()


async def _close(session: Session) -> None:
    for extra in list(session.extras.values()):
        stop = getattr(extra, "stop", None)
        if callable(stop):
            await stop()
    session.extras.clear()
    await session.live.close()
