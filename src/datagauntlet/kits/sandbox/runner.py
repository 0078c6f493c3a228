"""Run one script in the sandbox: spawn the launcher, feed it the code, collect the result.

The parent is the supervisor (supervise.py): it caps what it keeps of stdout and stderr,
kills the whole process group at the wall-clock deadline or on an output flood (sweeps.py),
reads the walls' report channel, and turns what it saw into a `SandboxResult` (report.py). It
never trusts the child's word for which walls were up beyond the lines written before user
code started.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from datagauntlet.core.user_files import read_bytes
from datagauntlet.kits.sandbox.limits import EXPLORE, Limits
from datagauntlet.kits.sandbox.result import SandboxResult
from datagauntlet.kits.sandbox.runtime import Runtime, runtime
from datagauntlet.kits.sandbox.supervise import supervise
from datagauntlet.kits.sandbox.sweeps import kill_uid
from datagauntlet.kits.sandbox.walls import WALLS, check_names
from datagauntlet.kits.sandbox.workspace import give_back, hand_over

READ_ROOTS = ("/usr/share/zoneinfo",)  # public data a stdlib script may read (zoneinfo)
READ_FILES = ("/dev/urandom",)
REFUSED_EXIT = 125
MAX_SCRIPT_BYTES = 16 << 20  # a script given by path: a regular file, at most this large


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
            kill_uid(uid)
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
        return supervise(proc, report_r, source, limits, start, uid if dropping else None, ws)
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
