"""What a run comes to: the walls' report channel read (only lines written before user code
started count for which walls were up), the exit and the supervisor's findings, as a
`SandboxResult`."""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

from datagauntlet.kits.sandbox.limits import Limits
from datagauntlet.kits.sandbox.result import SandboxResult, Violation
from datagauntlet.kits.sandbox.walls import WALLS, WallsUnavailable


class Stream:
    """What the supervisor keeps of one output pipe: its first `cap` bytes, and the total."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += data[:room]

    def text(self) -> str:
        return self.kept.decode("utf-8", "replace")


def result_of(
    exit_code: int,
    out: Stream,
    err: Stream,
    chan: bytes,
    supervisor: list[Violation],
    limits: Limits,
    wall_s: float,
    cpu_s: float,
    timed_out: bool,
    killed: bool,
    max_rss: int,
    ws: Path,
) -> SandboxResult:
    walls: list[str] = []
    down: dict[str, str] = {}
    notes: dict[str, str] = {}
    violations: list[Violation] = []
    exception = None
    started = refused = False
    for raw in chan.decode("utf-8", "replace").splitlines():
        parts = raw.split("\t")
        kind = parts[0]
        if kind == "W" and not started and len(parts) >= 4:
            if parts[2] == "up":
                walls.append(parts[1])
                notes[parts[1]] = parts[3]
            else:
                down[parts[1]] = parts[3]
        elif kind == "R" and not started:
            refused = True
        elif kind == "S":
            started = True
        elif kind == "V" and started and len(parts) >= 3:
            violations.append(Violation(parts[1], parts[2], "\t".join(parts[3:])))
        elif kind == "X" and started and len(parts) >= 4:
            exception = f"{parts[1]}: {parts[3]}" if parts[3] else parts[1]
            limit = limit_hit(parts[1], parts[2], parts[3])
            if limit == "kernel refusal" or outside_sqlite(parts[1], parts[3], ws):
                violations.append(Violation("kernel", "refused", exception))
            elif limit:
                violations.append(Violation("rlimits", limit, exception))
    if refused:
        raise WallsUnavailable({w: down.get(w, "down") for w in down if w not in walls})
    if not started and not killed:
        exception = exception or "the sandbox launcher failed before the script started"
    if exit_code < 0 and not killed:
        sig = -exit_code
        name = signal.Signals(sig).name if sig in signal.valid_signals() else str(sig)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_s >= limits.cpu_s):
            violations.append(Violation("rlimits", "cpu", f"killed by {name}"))
        else:
            violations.append(Violation("process", "crash", f"killed by {name}"))
    violations.extend(supervisor)
    truncated = out.total > len(out.kept) or err.total > len(err.kept)
    return SandboxResult(
        exit_code=exit_code,
        stdout=out.text(),
        stderr=err.text(),
        wall_s=wall_s,
        cpu_s=cpu_s,
        violations=tuple(violations),
        walls=tuple(w for w in WALLS if w in walls),
        walls_down=down,
        wall_notes=notes,
        truncated=truncated,
        timed_out=timed_out,
        exception=exception,
        max_rss_kb=max_rss,
    )


def outside_sqlite(kind: str, message: str, ws: Path) -> bool:
    """SQLite opens files itself (ATTACH), out of the audit hook's sight: a failed open of a
    path outside the workspace is the kernel walls' refusal."""
    prefix = "unable to open database: "
    if kind != "OperationalError" or not message.startswith(prefix):
        return False
    path = message[len(prefix) :]
    return path.startswith("/") and not Path(os.path.normpath(path)).is_relative_to(ws)


def limit_hit(kind: str, err_no: str, message: str) -> str | None:
    """Which resource limit an uncaught exception shows the script ran into, if any."""
    if kind == "MemoryError":
        return "memory"
    if kind == "PermissionError" and err_no in (str(errno.EPERM), str(errno.EACCES)):
        return "kernel refusal"  # seccomp, Landlock or the unprivileged uid said no
    if err_no == str(errno.EFBIG):
        return "file size"
    if err_no == str(errno.EMFILE):
        return "open files"
    if kind == "RuntimeError" and "can't start new thread" in message:
        return "processes"
    if err_no == str(errno.EAGAIN) and "fork" in message.lower():
        return "processes"
    return None
