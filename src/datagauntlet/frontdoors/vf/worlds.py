"""A bounded registry of live worlds, keyed by random keys nobody can guess.

Worlds are removed when their rollout is scored. A rollout that is never scored (a crash, a
cancelled eval) must not leak: putting a world evicts those older than `max_age` seconds, then
the oldest while more than `max_worlds` are live.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.frontdoors.live import LiveEpisode

MAX_WORLDS = 4096
MAX_AGE_SECONDS = 6 * 3600.0


@dataclass
class WorldEntry:
    """A registered rollout's live episode (its thread runs every call and the score)."""

    live: LiveEpisode
    created: float
    # the MCP tool list, built on first use (tool_server.world_tools)
    mcp_tools: list[Any] | None = field(default=None, repr=False)

    def close(self) -> None:
        """Free the world without waiting: the caller may be an event loop, and the world's
        thread may still be busy with a straggling call."""
        self.live.close_nowait()


def new_world_key() -> str:
    """256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


class WorldRegistry:
    def __init__(
        self, max_worlds: int = MAX_WORLDS, max_age: float = MAX_AGE_SECONDS, clock: Any = None
    ) -> None:
        if max_worlds < 1 or max_age <= 0:
            raise ValueError("max_worlds must be >= 1 and max_age > 0")
        self.max_worlds = max_worlds
        self.max_age = max_age
        self._clock = clock or time.monotonic
        self._worlds: OrderedDict[str, WorldEntry] = OrderedDict()
        self._lock = threading.Lock()
        self.evicted = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._worlds)

    def put(self, live: LiveEpisode, key: str | None = None) -> str:
        """Register a world under `key` (default: a new one); return the key. A world already
        under that key (its rollout's task ran another rollout before ending) is freed."""
        key = key or new_world_key()
        now = self._clock()
        with self._lock:
            replaced = self._worlds.pop(key, None)
            if replaced is not None:
                replaced.close()
            while self._worlds:
                oldest_key, oldest = next(iter(self._worlds.items()))
                if now - oldest.created < self.max_age and len(self._worlds) < self.max_worlds:
                    break
                del self._worlds[oldest_key]
                oldest.close()
                self.evicted += 1
            self._worlds[key] = WorldEntry(live, now)
        return key

    def get(self, key: str) -> WorldEntry | None:
        with self._lock:
            world = self._worlds.get(key)
            if world is not None and self._clock() - world.created >= self.max_age:
                del self._worlds[key]
                world.close()
                self.evicted += 1
                return None
            return world

    def pop(self, key: str) -> WorldEntry | None:
        """Take a world out (to score it); the caller closes it."""
        with self._lock:
            return self._worlds.pop(key, None)


# One registry per process: the tool server and the tasks of every taskset share it.
WORLDS = WorldRegistry()
