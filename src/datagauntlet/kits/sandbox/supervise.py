"""The supervisor's side of a run: feed the script to the child, read its pipes and the walls'
report channel, kill its whole process group at the wall-clock deadline or on an output flood,
then reap it and sweep what it left behind."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from pathlib import Path
from typing import Any

from datagauntlet.kits.sandbox.limits import Limits
from datagauntlet.kits.sandbox.report import Stream, result_of
from datagauntlet.kits.sandbox.result import SandboxResult, Violation
from datagauntlet.kits.sandbox.sweeps import kill_group, kill_uid

_CHUNK = 1 << 16


def supervise(
    proc: subprocess.Popen,
    report_r: int,
    source: bytes,
    limits: Limits,
    start: float,
    run_uid: int | None,
    ws: Path,
) -> SandboxResult:
    assert proc.stdin and proc.stdout and proc.stderr
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.write(source)
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.close()
    out, err, chan = Stream(limits.output_bytes), Stream(limits.output_bytes), bytearray()
    supervisor: list[Violation] = []
    status, rusage, killed, timed_out = _watch(
        proc, report_r, out, err, chan, supervisor, limits, start
    )
    if status is None:
        if killed:
            kill_group(proc.pid)
        _, status, rusage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall_s = time.monotonic() - start
    kill_group(proc.pid)  # anything left in the group
    cpu_s = rusage.ru_utime + rusage.ru_stime if rusage else 0.0
    res = result_of(
        proc.returncode, out, err, bytes(chan), supervisor, limits, wall_s, cpu_s, timed_out,
        killed, rusage.ru_maxrss if rusage else 0, ws,
    )  # fmt: skip
    if run_uid is not None and "seccomp" not in res.walls:
        kill_uid(run_uid)  # only without seccomp could the run have made a process at all
    return res


def _watch(
    proc: subprocess.Popen,
    report_r: int,
    out: Stream,
    err: Stream,
    chan: bytearray,
    supervisor: list[Violation],
    limits: Limits,
    start: float,
) -> tuple[int | None, Any, bool, bool]:
    """Read the pipes until they close or the deadline (and its grace) passes: (wait status
    and rusage if the child was reaped here, killed, timed out)."""
    assert proc.stdout and proc.stderr
    deadline = start + limits.timeout_s
    killed = timed_out = False
    status = rusage = None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, out)
    sel.register(proc.stderr, selectors.EVENT_READ, err)
    sel.register(report_r, selectors.EVENT_READ, chan)
    try:
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline and not killed:
                kill_group(proc.pid)
                killed = timed_out = True
                supervisor.append(
                    Violation("supervisor", "timeout", f"killed after {limits.timeout_s:g} s")
                )
                deadline = now + 2.0  # grace to drain what is already in the pipes
            elif now >= deadline:
                break
            events = sel.select(timeout=min(0.25, max(0.0, deadline - now)))
            if not events and status is None:
                pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid:  # exited, but something it left behind still holds a pipe open
                    status, rusage = st, ru
                    kill_group(proc.pid)
                    deadline = min(deadline, time.monotonic() + 0.5)
            for key, _ in events:
                sink = _read_into(sel, key)
                if sink is None or sink.total <= limits.flood_bytes or killed:
                    continue
                kill_group(proc.pid)
                killed = True
                which = "stdout" if sink is out else "stderr"
                supervisor.append(
                    Violation(
                        "supervisor",
                        "output flood",
                        f"killed past {limits.flood_bytes:,} bytes on {which}",
                    )
                )
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
    return status, rusage, killed, timed_out


def _read_into(sel: selectors.BaseSelector, key: selectors.SelectorKey) -> Stream | None:
    """Read what one ready pipe holds into its sink (unregistered once it closes): the output
    stream fed, or None for the report channel and a closed pipe."""
    try:
        data = os.read(key.fd, _CHUNK)
    except OSError:
        data = b""
    if not data:
        sel.unregister(key.fileobj)
        return None
    sink = key.data
    if isinstance(sink, bytearray):
        if len(sink) < 1 << 20:  # the channel is small unless the script floods it
            sink += data
        return None
    sink.feed(data)
    return sink
