"""Run one script in the sandbox: spawn the launcher, feed it the code, collect the result.

The parent is the supervisor: it caps what it keeps of stdout and stderr, kills the whole
process group at the wall-clock deadline or on an output flood, reads the walls' report
channel, and turns what it saw into a `SandboxResult`. It never trusts the child's word for
which walls were up beyond the lines written before user code started.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from datagauntlet.core.user_files import read_bytes
from datagauntlet.kits.sandbox.limits import EXPLORE, Limits
from datagauntlet.kits.sandbox.result import SandboxResult, Violation
from datagauntlet.kits.sandbox.runtime import Runtime, runtime
from datagauntlet.kits.sandbox.walls import WALLS, WallsUnavailable, check_names
from datagauntlet.kits.sandbox.workspace import give_back, hand_over

READ_ROOTS = ("/usr/share/zoneinfo",)  # public data a stdlib script may read (zoneinfo)
READ_FILES = ("/dev/urandom",)
REFUSED_EXIT = 125
MAX_SCRIPT_BYTES = 16 << 20  # a script given by path: a regular file, at most this large
_CHUNK = 1 << 16


def run_script(
    code: str | bytes | os.PathLike[str],
    workspace: str | os.PathLike[str],
    limits: Limits | None = None,
    *,
    walls: Iterable[str] = WALLS,
    require: Iterable[str] = (),
    filename: str | None = None,
    unwalled: bool = False,
) -> SandboxResult:
    """Run Python `code` (source text, or a path to a script) with `workspace` as its only
    writable place, behind `walls`. Raises `WallsUnavailable` (and runs nothing) when a
    wall in `require` cannot be raised on this host; raises ValueError for bad arguments.
    An empty `walls` is refused unless `unwalled` says so: only the escape battery's control
    runs with the supervisor alone."""
    limits = limits or EXPLORE
    walls = check_names(walls, "walls")
    require = check_names(require, "require")
    if set(require) - set(walls):
        missing = sorted(set(require) - set(walls))  # sorted: the same message every run
        raise ValueError(f"required walls not requested: {', '.join(missing)}")
    if not walls and not unwalled:
        raise ValueError("no sandbox wall requested; name at least one of " + ", ".join(WALLS))
    if not os.fspath(workspace):
        raise ValueError("the sandbox workspace path is empty")
    ws = Path(os.path.realpath(workspace))
    if not ws.is_dir():
        raise ValueError(f"sandbox workspace is not a directory: {workspace}")
    source, name = _source(code, ws, filename)
    rt = runtime()
    dropping = "process" in walls and os.geteuid() == 0
    uid = gid = _run_uid() if dropping else os.geteuid()
    owners = hand_over(ws, uid, gid) if dropping else {}
    try:
        return _spawn(rt, ws, source, name, walls, require, limits, uid, gid, dropping)
    except BaseException:
        if dropping:  # interrupted while supervising: none of the run's processes outlive it
            _kill_uid(uid)
        raise
    finally:
        give_back(ws, owners, uid)  # also when the run was killed or this process interrupted


def _spawn(
    rt: Runtime,
    ws: Path,
    source: bytes,
    name: str,
    walls: tuple[str, ...],
    require: tuple[str, ...],
    limits: Limits,
    uid: int,
    gid: int,
    dropping: bool,
) -> SandboxResult:
    report_r, report_w = os.pipe()
    cfg = _child_config(rt, ws, walls, require, limits, uid, gid, report_w, name)
    if "process" in walls:
        argv = [str(rt.python), "-I", "-S", "-B", "-X", "utf8", str(rt.launcher), repr(cfg)]
        env = {"HOME": str(ws), "TMPDIR": str(ws), "SQLITE_TMPDIR": str(ws), "TZ": "UTC"}
        env |= {"LANG": "C.UTF-8", "PATH": "/nonexistent"}
    else:
        # Without the process wall the child sees this process's environment, and the package
        # on its import path even where an editable install reaches it through a finder, so the
        # other walls are measured against a child that could import the package.
        argv = [str(rt.python), "-B", "-X", "utf8", str(rt.launcher), repr(cfg)]
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[3])
        extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([package_root, *extra]))
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=ws,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(report_w,),
            start_new_session=True,
        )
    finally:
        os.close(report_w)
    try:
        return _supervise(proc, report_r, source, limits, start, uid if dropping else None, ws)
    finally:
        os.close(report_r)


def _source(code: str | bytes | os.PathLike[str], ws: Path, filename: str | None):
    if isinstance(code, os.PathLike):
        path = Path(code)
        data = read_bytes(path, MAX_SCRIPT_BYTES, "script")
        if filename is None:
            real = Path(os.path.realpath(path))
            inside = real.is_relative_to(ws)
            filename = str(real.relative_to(ws)) if inside else f"<{path.name}>"
        return data, filename
    if isinstance(code, str):
        return code.encode("utf-8", "surrogatepass"), filename or "<script>"
    if isinstance(code, bytes):
        return code, filename or "<script>"
    raise ValueError(f"sandbox code must be text or a path, got {type(code).__name__}")


def _run_uid() -> int:
    # One uid per run: runs cannot signal or read each other, and NPROC counts only this run.
    return 0x10000 + int.from_bytes(os.urandom(3), "big")


def _child_config(
    rt: Runtime,
    ws: Path,
    walls: tuple[str, ...],
    require: tuple[str, ...],
    limits: Limits,
    uid: int,
    gid: int,
    report_fd: int,
    filename: str,
) -> dict:
    root = os.path.realpath(rt.root)
    roots = [root, *(os.path.realpath(p) for p in READ_ROOTS if os.path.isdir(p))]
    return {
        "workspace": str(ws),
        "walls": list(walls),
        "all_walls": list(WALLS),
        "require": list(require),
        "report_fd": report_fd,
        "uid": uid,
        "gid": gid,
        "parent_pid": os.getpid(),
        "limits": limits.for_child(),
        "runtime": root,
        "read_dirs": roots,
        "read_files": [*rt.libs, *READ_FILES],
        "audit_roots": roots,
        "dynload": os.path.realpath(rt.stdlib / "lib-dynload"),
        "digests": str(rt.digests),
        "filename": filename,
    }


class _Stream:
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


def _supervise(
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
    out, err, chan = _Stream(limits.output_bytes), _Stream(limits.output_bytes), bytearray()
    supervisor: list[Violation] = []
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
                _kill_group(proc.pid)
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
                    _kill_group(proc.pid)
                    deadline = min(deadline, time.monotonic() + 0.5)
            for key, _ in events:
                fd = key.fd
                try:
                    data = os.read(fd, _CHUNK)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                sink = key.data
                if isinstance(sink, bytearray):
                    if len(sink) < 1 << 20:  # the channel is small unless the script floods it
                        sink += data
                    continue
                sink.feed(data)
                if sink.total > limits.flood_bytes and not killed:
                    _kill_group(proc.pid)
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
    if status is None:
        if killed:
            _kill_group(proc.pid)
        _, status, rusage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall_s = time.monotonic() - start
    _kill_group(proc.pid)  # anything left in the group
    cpu_s = rusage.ru_utime + rusage.ru_stime if rusage else 0.0
    res = _result(
        proc.returncode, out, err, bytes(chan), supervisor, limits, wall_s, cpu_s, timed_out,
        killed, rusage.ru_maxrss if rusage else 0, ws,
    )  # fmt: skip
    if run_uid is not None and "seccomp" not in res.walls:
        _kill_uid(run_uid)  # only without seccomp could the run have made a process at all
    return res


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _kill_uid(uid: int) -> None:
    """Kill every process of this run's uid (one that left the group by setsid), and wait
    until none is left running."""
    for _ in range(20):
        alive = _pids_of(uid)
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _pids_of(uid: int) -> list[int]:
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


def _result(
    exit_code: int,
    out: _Stream,
    err: _Stream,
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
            limit = _limit_hit(parts[1], parts[2], parts[3])
            if limit == "kernel refusal" or _outside_sqlite(parts[1], parts[3], ws):
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


def _outside_sqlite(kind: str, message: str, ws: Path) -> bool:
    """SQLite opens files itself (ATTACH), out of the audit hook's sight: a failed open of a
    path outside the workspace is the kernel walls' refusal."""
    prefix = "unable to open database: "
    if kind != "OperationalError" or not message.startswith(prefix):
        return False
    path = message[len(prefix) :]
    return path.startswith("/") and not Path(os.path.normpath(path)).is_relative_to(ws)


def _limit_hit(kind: str, err_no: str, message: str) -> str | None:
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
