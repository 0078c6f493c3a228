"""The event loop a door runs on: uvloop when it is installed, else asyncio's own.

At hundreds of concurrent model calls the loop itself is a fifth of a call's CPU: asyncio's
timer heap compares handles in Python and its socket transports are Python code. uvloop
(libuv, in C) is a drop-in loop; nothing here depends on it, so without it (Windows, a minimal
install) the same code runs on asyncio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
LOOPS = ("auto", "uvloop", "asyncio")


def loop_factory(kind: str = "auto") -> Callable[[], asyncio.AbstractEventLoop] | None:
    """A factory for `asyncio.Runner`: uvloop's when `kind` allows and it is installed; None
    (asyncio's default) otherwise. `uvloop` insists: a ValueError when it is missing."""
    if kind not in LOOPS:
        raise ValueError(f"unknown event loop {kind!r}; choose from {', '.join(LOOPS)}")
    if kind == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if kind == "uvloop":
            raise ValueError("--event-loop uvloop: uvloop is not installed") from None
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T], kind: str = "auto") -> T:
    """`asyncio.run(main)` on the loop `kind` picks."""
    with asyncio.Runner(loop_factory=loop_factory(kind)) as runner:
        return runner.run(main)


def loop_name() -> str:
    """The running loop's kind, for reports."""
    loop = asyncio.get_running_loop()
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
