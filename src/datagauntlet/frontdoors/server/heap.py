"""The worker's heap before it serves: every env loaded, then the start-up heap frozen.

A worker holds a few hundred thousand objects that live as long as it does (the modules of
uvicorn, Starlette, MCP, pydantic and every env). Python's cyclic collector walks all of them on
each full collection, and with worlds built and dropped all day full collections come often:
measured in a worker under load, 0.2-0.6 s each (40-220 ms of CPU), every session of the
worker waiting behind it. So, once, before the first request:

- every registered env is made with its default config and one episode of it is built and
  closed, so the modules and tables a session needs are loaded now, not inside a call;
- `gc.freeze()` moves everything alive at that point out of the collector's sight (it is still
  freed by reference counting; only cycles among start-up objects would stay, and they live for
  the whole process anyway);
- the youngest generation is collected every `YOUNG` allocations instead of 700, so the many
  short-lived objects of a call die before a collection sees them and fewer survive into the
  older generations, whose collections walk every live world. Measured with the benchmark's
  mix (CPU time in the collector per worker over 25 s): 330 ms with the defaults, 340 ms frozen
  at 700, 100 ms frozen at 5,000 (the longest collection 40 -> 17-20 ms).

Closed worlds themselves are freed by reference counting (`Episode.close` leaves no cycle), so
the collector finds almost nothing to free; what it costs is the walk.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Any

YOUNG = 5_000  # allocations between collections of the youngest generation (default 700)
OLDER = (20, 20)  # collections of one generation between collections of the next (default 10, 10)


def warm(store: Any) -> None:
    """Load every env (the store keeps its default-config env) and build one episode of each."""
    from datagauntlet.core.registry import list_envs

    for env_id in list_envs():
        # warming is a speed-up only: an env that cannot build here fails in its own session,
        # with its own message, as it would have without it
        with contextlib.suppress(Exception):
            env = store.env(env_id, {})
            env.episode(env.make_task("eval", 0)).close()


def settle(store: Any) -> None:
    warm(store)
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, *OLDER)
