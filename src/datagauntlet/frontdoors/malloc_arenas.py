"""Cap glibc's malloc arenas in a door that serves each connection on its own thread.

glibc gives each new thread its own arena (up to 8 per core), and memory freed in an arena
stays with it. A threaded server that parses one 24 MB body at a time on ever-new threads so
holds the high-water mark of a body in every arena it touched: six concurrent bodies measured
293 MB against 140 MB for the same bodies in turn. Python allocates under its GIL, so more
arenas buy it little; two leave room for work done without the GIL (SQLite's own allocations).
Elsewhere (musl, macOS) there is nothing to cap and this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_ARENA_MAX = -8  # from glibc's malloc.h
ARENAS = 2

_done = False


def cap_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Limit the process to `arenas` malloc arenas; True if the allocator took the setting.
    Call before the server starts its threads: a thread keeps the arena it first used."""
    global _done
    if _done or not sys.platform.startswith("linux"):
        return _done
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # not glibc
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    _done = mallopt(M_ARENA_MAX, arenas) == 1
    return _done
