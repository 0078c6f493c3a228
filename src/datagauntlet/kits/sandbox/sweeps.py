"""The run's process sweeps: kill its process group, and every process of its uid (one that left
the group by setsid), until none is left running."""

from __future__ import annotations

import contextlib
import os
import signal
import time


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_uid(uid: int) -> None:
    """Kill every process of this run's uid (one that left the group by setsid), and wait
    until none is left running."""
    for _ in range(20):
        alive = pids_of(uid)
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def pids_of(uid: int) -> list[int]:
    token = f"Uid:\t{uid}\t"
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                text = fh.read(2048)
        except OSError:
            continue
        if token in text and "State:\tZ" not in text:
            out.append(int(entry))
    return out
