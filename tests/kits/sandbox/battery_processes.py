"""Escape-battery attacks that start or signal processes: subprocess and every way around it,
fork and thread bombs, the parent, a raised resource limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from battery_case import Case, walls


def _forks(res: Any, ws: Path, ctx: Any) -> bool:
    path = ws / "forks"
    return path.exists() and path.stat().st_size >= 126  # 2 + 4 + ... + 64 writes


def _no_cap_sys_resource() -> str:
    """Root without CAP_SYS_RESOURCE cannot raise a hard limit either (true of containers)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return "" if int(line.split()[1], 16) >> 24 & 1 else "root lacks CAP_SYS_RESOURCE"
    return ""


PROCESSES = [
    Case(
        "subprocess",
        "processes",
        "subprocess.run a shell command",
        "import subprocess\nsubprocess.run(['/bin/sh', '-c', 'echo x > ran'])",
        walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "os.system",
        "processes",
        "os.system a shell command",
        "import os\nassert os.system('echo x > ran') == 0",
        walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "fork",
        "processes",
        "os.fork a child process",
        "import os\npid = os.fork()\nif pid == 0: os._exit(0)\n"
        "os.waitpid(pid, 0); print('ESCAPED')",
        walls("audit", "seccomp"),
    ),
    Case(
        "posix_spawn",
        "processes",
        "os.posix_spawn a shell",
        "import os\npid = os.posix_spawn('/bin/sh', ['sh', '-c', 'echo x > ran'], {{}})\n"
        "os.waitpid(pid, 0)",
        walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "exec",
        "processes",
        "os.execv a shell in place of the interpreter",
        "import os\nos.execv('/bin/sh', ['sh', '-c', 'echo ESCAPED'])",
        walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "_posixsubprocess",
        "processes",
        "call _posixsubprocess.fork_exec directly (it raises no audit event)",
        "import _posixsubprocess, os\nr, w = os.pipe()\n"
        "pid = _posixsubprocess.fork_exec([b'/bin/sh', b'-c', b'echo x > ran'], "
        "[b'/bin/sh'], True, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, "
        "-1, None, None, None, -1, None, False)\n"
        "os.waitpid(pid, 0)",
        walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "pty",
        "processes",
        "pty.fork a child on a pseudo-terminal",
        "import pty, os\npid, fd = pty.fork()\nif pid == 0: os._exit(0)\nprint('ESCAPED')",
        walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "multiprocessing",
        "processes",
        "start a multiprocessing.Process",
        "import multiprocessing, os\np = multiprocessing.Process(target=os._exit, args=(0,))\n"
        "p.start(); p.join()\nif p.exitcode == 0: print('ESCAPED')",
        walls("audit", "seccomp"),
    ),
    Case(
        "fork bomb",
        "processes",
        "fork six generations (64 processes), bounded so a failing wall costs little",
        "import os, time\nfor _ in range(6):\n    os.fork()\n    open('forks', 'a').write('x')\n"
        "time.sleep(30)",
        walls("audit", "seccomp", "rlimits"),
        needs=walls("process"),
        limits={"timeout_s": 1.5},
        escaped=_forks,
    ),
    Case(
        "thread bomb",
        "processes",
        "start 2,000 sleeping threads",
        "import threading, time\nfor i in range(2000):\n"
        "    threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "print('ESCAPED')",
        walls("rlimits"),
        limits={"timeout_s": 4.0},
    ),
    Case(
        "kill the parent",
        "processes",
        "signal the parent process (signal 0: permission check only)",
        "import os; os.kill(os.getppid(), 0); print('ESCAPED')",
        walls("audit", "seccomp", "landlock", "process"),
    ),
    Case(
        "raise a resource limit",
        "processes",
        "raise RLIMIT_NOFILE's hard limit",
        "import resource as r\nsoft, hard = r.getrlimit(r.RLIMIT_NOFILE)\n"
        "r.setrlimit(r.RLIMIT_NOFILE, (hard + 1, hard + 1))\n"
        "if r.getrlimit(r.RLIMIT_NOFILE)[1] > hard: print('ESCAPED')",
        walls("audit", "seccomp", "process"),
        needs=walls("rlimits"),
        host=_no_cap_sys_resource,
    ),
]
