"""The counts every worker of one server shares: sessions held against the limit, world bytes
held against the memory budget, open, made, reaped, and each worker's pid and state.

One row of int64 slots per worker in a memory-mapped file (the supervisor's private run
directory), so `GET /health` on any worker reads the whole server without asking the others.
A worker writes only its own row; the limit check (sum of every row's `held`, then this row's
`held` + 1) is done under an exclusive `flock` on the file, so two workers admitting a session
at the same instant cannot both take the last seat. The kernel drops the lock of a process
that dies, and the supervisor zeroes a dead worker's row: its seats are given back.

With one process the same class runs on an anonymous buffer and no lock.
"""

from __future__ import annotations

import fcntl
import mmap
import os
from contextlib import AbstractContextManager, nullcontext
from typing import Any

FIELDS = (
    "held", "open", "created", "reaped", "pid", "ready", "restarts", "passed_on", "world_bytes",
)  # fmt: skip
_HELD, _OPEN, _CREATED, _REAPED, _PID, _READY, _RESTARTS, _PASSED, _BYTES = range(len(FIELDS))
_WIDTH = len(FIELDS)


class _Locked(AbstractContextManager[None]):
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)


class Tally:
    """`Tally.create(path, workers)` in the supervisor, `Tally.attach(path, workers, index)` in
    a worker, `Tally.local()` for a server of one process."""

    def __init__(self, buf: Any, workers: int, index: int, fd: int | None) -> None:
        self._buf = buf
        self._slots = memoryview(buf).cast("q")
        self.workers = workers
        self.index = index
        self._fd = fd

    @classmethod
    def local(cls) -> Tally:
        return cls(bytearray(8 * _WIDTH), 1, 0, None)

    @classmethod
    def create(cls, path: str, workers: int) -> Tally:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.ftruncate(fd, 8 * _WIDTH * workers)
        return cls(mmap.mmap(fd, 8 * _WIDTH * workers), workers, -1, fd)

    @classmethod
    def attach(cls, path: str, workers: int, index: int) -> Tally:
        fd = os.open(path, os.O_RDWR)
        return cls(mmap.mmap(fd, 8 * _WIDTH * workers), workers, index, fd)

    def close(self) -> None:
        self._slots.release()
        if isinstance(self._buf, mmap.mmap):
            self._buf.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _lock(self) -> AbstractContextManager[None]:
        return nullcontext() if self._fd is None else _Locked(self._fd)

    def _get(self, worker: int, field: int) -> int:
        return self._slots[worker * _WIDTH + field]

    def _set(self, worker: int, field: int, value: int) -> None:
        self._slots[worker * _WIDTH + field] = value

    # --- a worker's own row ---------------------------------------------------------------
    def hold(self, limit: int) -> bool:
        """Take a seat for a session about to be made, unless `limit` seats are taken."""
        with self._lock():
            if sum(self._get(w, _HELD) for w in range(self.workers)) >= limit:
                return False
            self._set(self.index, _HELD, self._get(self.index, _HELD) + 1)
            return True

    def release(self, n: int = 1) -> None:
        with self._lock():
            self._set(self.index, _HELD, max(0, self._get(self.index, _HELD) - n))

    def hold_bytes(self, n: int, budget: int) -> int | None:
        """Take `n` bytes of the world budget; None when taken, else the bytes every worker
        holds already (the budget would be exceeded)."""
        with self._lock():
            used = sum(self._get(w, _BYTES) for w in range(self.workers))
            if used + n > budget:
                return used
            self._set(self.index, _BYTES, self._get(self.index, _BYTES) + n)
            return None

    def release_bytes(self, n: int) -> None:
        with self._lock():
            self._set(self.index, _BYTES, max(0, self._get(self.index, _BYTES) - n))

    def publish(self, open_now: int, created: int, reaped: int) -> None:
        self._set(self.index, _OPEN, open_now)
        self._set(self.index, _CREATED, created)
        self._set(self.index, _REAPED, reaped)

    def passed_on(self) -> None:
        """One more request or connection this worker passed to the session's worker."""
        self._set(self.index, _PASSED, self._get(self.index, _PASSED) + 1)

    def counts(self) -> tuple[int, int]:
        """What this worker made and reaped before (a restarted worker goes on from there)."""
        return self._get(self.index, _CREATED), self._get(self.index, _REAPED)

    def mark_ready(self) -> None:
        self._set(self.index, _PID, os.getpid())
        self._set(self.index, _READY, 1)

    # --- the supervisor's view ------------------------------------------------------------
    def started(self, worker: int, pid: int, restarts: int) -> None:
        with self._lock():
            self._set(worker, _HELD, 0)
            self._set(worker, _BYTES, 0)
            self._set(worker, _OPEN, 0)
            self._set(worker, _READY, 0)
            self._set(worker, _PID, pid)
            self._set(worker, _RESTARTS, restarts)

    def died(self, worker: int) -> int:
        """Free a dead worker's seats; the number of sessions it held."""
        with self._lock():
            lost = self._get(worker, _OPEN)
            self._set(worker, _HELD, 0)
            self._set(worker, _BYTES, 0)
            self._set(worker, _OPEN, 0)
            self._set(worker, _READY, 0)
            return lost

    def ready(self, worker: int) -> bool:
        return bool(self._get(worker, _READY))

    # --- every worker's view --------------------------------------------------------------
    def total(self, field: str) -> int:
        k = FIELDS.index(field)
        return sum(self._get(w, k) for w in range(self.workers))

    def rows(self) -> list[dict[str, Any]]:
        return [
            {
                "worker": w,
                "pid": self._get(w, _PID),
                "ready": bool(self._get(w, _READY)),
                "sessions": self._get(w, _OPEN),
                "world_bytes": self._get(w, _BYTES),
                "created": self._get(w, _CREATED),
                "restarts": self._get(w, _RESTARTS),
                "passed_on": self._get(w, _PASSED),
            }
            for w in range(self.workers)
        ]
