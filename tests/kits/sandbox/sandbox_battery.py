"""The escape battery: attacks on the sandbox, each with the walls that stop it.

Scripts that start a program have it write `ran` in the workspace (a run user may write
there), so what is measured is whether the program ran, not where it could write.

Each case is a script that prints ESCAPED (or leaks a secret, or leaves a marker, or reaches a
listener the test runs) when its attack works. `stoppers` names the walls that stop it on
their own; "supervisor" is the parent process (the timeout, the output caps, the process
boundary), which is always there. `needs` names walls the attack is about (raising a limit
needs limits to raise), which stay up when the others are taken down. The declarations are
checked three ways by test_sandbox_escape_battery.py: every wall up (stopped, and a violation
recorded), each wall down alone (stopped exactly when another stopper remains) and each wall
alone (stopped exactly when it is a stopper). docs/sandbox.md's table is rendered from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datagauntlet.kits.sandbox import Limits

# Small, so the battery stays quick and a wall that fails costs the machine little.
BATTERY_LIMITS = Limits(
    timeout_s=3.0,
    cpu_s=1,
    memory_mb=256,
    file_size_mb=16,
    open_files=64,
    processes=32,
    output_bytes=4096,
    flood_bytes=1 << 20,
)
SECRET = "s3cr3t-outside-the-workspace"
ALWAYS = frozenset({"supervisor", "runtime"})  # layers no configuration takes down

# Empties the interpreter's audit-hook list by writing to memory: it works against a plain
# audit hook (test_attacks_are_real), so the sandbox must refuse it before it starts.
UNHOOK = """import ctypes, gc, os
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
def peek(addr):  # write(2) answers EFAULT for an unmapped address instead of crashing
    if libc.write(w, ctypes.c_void_p(addr), 8) != 8:
        return None
    return int.from_bytes(os.read(r, 8), 'little')
hooks = {{id(o) for o in gc.get_objects() if type(o).__name__ == 'function'
         and o.__name__ == 'hook'}}
get = ctypes.pythonapi.PyInterpreterState_Get
get.restype = ctypes.c_void_p
base = get()
for off in range(0, 1 << 17, 8):
    p = peek(base + off)
    if p and peek(p + 8) == id(list) and (peek(p + 16) or 0) > 0:
        items = peek(p + 24)
        if items and peek(items) in hooks:
            ctypes.memset(p + 16, 0, 8)  # ob_size = 0: the list of hooks looks empty
            break
print(open('/etc/passwd').read()); print('ESCAPED')
"""
CANARY = "canary-from-the-parent-env"


@dataclass(frozen=True)
class Case:
    name: str
    group: str
    what: str  # one line for the docs table
    code: str
    stoppers: frozenset[str]
    needs: frozenset[str] = frozenset()
    setup: Callable[[Path, Any], None] | None = None
    limits: dict[str, float] = field(default_factory=dict)
    escaped: Callable[[Any, Path, Any], bool] | None = None  # (result, workspace, ctx)
    quiet: bool = False  # nothing to refuse: the wall removed what the attack looks for
    host: Callable[[], str] | None = None  # the host itself refuses it: why, or "" if not
    checked: frozenset[str] | None = None  # walls to take down and raise alone (default all)


def _walls(*names: str) -> frozenset[str]:
    return frozenset(names)


def _plant_symlink(ws: Path, ctx: Any) -> None:
    (ws / "link").symlink_to(ctx.secret)
    (ws / "dirlink").symlink_to(ctx.outside)


def _plant_hardlink(ws: Path, ctx: Any) -> None:
    (ws / "hl").hardlink_to(ctx.linked)


def _count_files(res: Any, ws: Path, ctx: Any) -> bool:
    return sum(1 for _ in ws.iterdir()) >= 100_000


def _forks(res: Any, ws: Path, ctx: Any) -> bool:
    path = ws / "forks"
    return path.exists() and path.stat().st_size >= 126  # 2 + 4 + ... + 64 writes


def _unrecorded(res: Any, ws: Path, ctx: Any) -> bool:
    return not any(v.wall == "audit" for v in res.violations)


def _not_cpu(res: Any, ws: Path, ctx: Any) -> bool:
    return not any(v.event == "cpu" for v in res.violations) and res.cpu_s >= 1.0


def _never(res: Any, ws: Path, ctx: Any) -> bool:
    return False


def _no_cap_sys_resource() -> str:
    """Root without CAP_SYS_RESOURCE cannot raise a hard limit either (true of containers)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return "" if int(line.split()[1], 16) >> 24 & 1 else "root lacks CAP_SYS_RESOURCE"
    return ""


FILES = [
    Case(
        "read /etc/passwd",
        "files",
        "open and print /etc/passwd",
        "print(open('/etc/passwd').read()); print('ESCAPED')",
        _walls("audit", "landlock"),
    ),
    Case(
        "read /etc/shadow",
        "files",
        "open /etc/shadow (root-only)",
        "print(open('/etc/shadow').read()); print('ESCAPED')",
        _walls("audit", "landlock", "process"),
    ),
    Case(
        "read /proc/self/environ",
        "files",
        "read the process environment through /proc",
        "data = open('/proc/self/environ', 'rb').read()\nprint(data)\nprint('ESCAPED')",
        _walls("audit", "landlock", "process"),
    ),
    Case(
        "parent env via os.environ",
        "files",
        "look for a variable the parent set",
        "import os; print(os.environ.get('DG_SANDBOX_CANARY'))",
        _walls("process"),
        quiet=True,
    ),
    Case(
        "read the parent's environ",
        "files",
        "read /proc/<parent>/environ",
        # ESCAPED first and a capped prefix: what the parent's block holds varies (a test
        # runner that sets its process title overwrites it with zeros), the read is the escape.
        "import os\ndata = open(f'/proc/{{os.getppid()}}/environ', 'rb').read()\n"
        "print('ESCAPED', len(data), data[:200])",
        _walls("audit", "landlock", "process"),
    ),
    Case(
        "../ relative path",
        "files",
        "read a file next to the workspace through ../",
        "print(open('../{outside_name}/secret.txt').read())",
        _walls("audit", "landlock"),
    ),
    Case(
        "absolute path",
        "files",
        "read a file outside by its absolute path",
        "print(open('{secret}').read())",
        _walls("audit", "landlock"),
    ),
    Case(
        "write outside",
        "files",
        "create a file outside the workspace",
        "open('{outside}/new.txt', 'w').write('x'); print('ESCAPED')",
        _walls("audit", "landlock", "process"),
    ),
    Case(
        "overwrite outside",
        "files",
        "overwrite a file outside",
        "open('{secret}', 'w').write('pwned'); print('ESCAPED')",
        _walls("audit", "landlock", "process"),
    ),
    Case(
        "write /tmp",
        "files",
        "create a file in /tmp (world-writable)",
        "open('{tmp_marker}', 'w').write('x'); print('ESCAPED')",
        _walls("audit", "landlock"),
    ),
    Case(
        "planted symlink read",
        "files",
        "read through a symlink to a file outside, planted in the workspace",
        "print(open('link').read())",
        _walls("audit", "landlock"),
        setup=_plant_symlink,
    ),
    Case(
        "planted symlink write",
        "files",
        "write through a planted symlink to a directory outside",
        "open('dirlink/new.txt', 'w').write('x'); print('ESCAPED')",
        _walls("audit", "landlock", "process"),
        setup=_plant_symlink,
    ),
    Case(
        "planted hardlink read",
        "files",
        "read a hard link to a file outside, planted in the workspace",
        "print(open('hl').read())",
        _walls("audit"),
        setup=_plant_hardlink,
    ),
    Case(
        "planted hardlink write",
        "files",
        "write through a planted hard link",
        "open('hl', 'w').write('pwned'); print('ESCAPED')",
        _walls("audit", "process"),
        setup=_plant_hardlink,
    ),
    Case(
        "symlink made by the script",
        "files",
        "create a symlink to a file outside, then read it",
        "import os\nos.symlink('{secret}', 'mine')\nprint(open('mine').read())",
        _walls("audit", "landlock"),
    ),
    Case(
        "list a directory outside",
        "files",
        "list the names in a directory outside",
        "import os; print(os.listdir('{outside}')); print('ESCAPED')",
        _walls("audit", "landlock"),
    ),
    Case(
        "chdir out",
        "files",
        "change directory outside, then read a relative path",
        "import os\nos.chdir('{outside}')\nprint(open('secret.txt').read())",
        _walls("audit", "landlock"),
    ),
    Case(
        "rename out",
        "files",
        "move a workspace file to outside",
        "open('mine', 'w').write('x')\nimport os; os.rename('mine', '{outside}/moved')\n"
        "print('ESCAPED')",
        _walls("audit", "landlock", "process"),
    ),
    Case(
        "chmod outside",
        "files",
        "change the mode of a file outside",
        "import os; os.chmod('{secret}', 0o777); print('ESCAPED')",
        _walls("audit", "process"),
    ),
    Case(
        "truncate outside",
        "files",
        "truncate a file outside",
        "import os; os.truncate('{secret}', 0); print('ESCAPED')",
        _walls("audit", "landlock", "process"),
    ),
    Case(
        "sqlite3.connect outside",
        "files",
        "open a database outside with sqlite3",
        "import sqlite3\ndb = sqlite3.connect('{secret_db}')\n"
        "print(db.execute('select s from t').fetchall())",
        _walls("audit", "landlock"),
    ),
    Case(
        "sqlite ATTACH outside",
        "files",
        "ATTACH a database outside from SQL (SQLite opens it, not Python)",
        "import sqlite3\nc = sqlite3.connect(':memory:')\n"
        "c.execute(\"attach database '{secret_db}' as o\")\n"
        "print(c.execute('select s from o.t').fetchall())",
        _walls("landlock"),
    ),
    Case(
        "/proc/self/mem",
        "files",
        "open /proc/self/mem to patch the interpreter's memory",
        "f = open('/proc/self/mem', 'r+b'); print('ESCAPED')",
        _walls("audit", "landlock", "process"),
    ),
    Case(
        "lying path object",
        "files",
        "an os.PathLike that names the workspace to a check and a secret to open()",
        "class P:\n    n = 0\n    def __fspath__(self):\n        P.n += 1\n"
        "        return 'ok.txt' if P.n % 2 == 0 else '{secret}'\n"
        "print(open(P()).read())",
        _walls("audit", "landlock"),
    ),
]

NETWORK = [
    Case(
        "TCP to a local listener",
        "network",
        "connect to a TCP listener the test runs on 127.0.0.1",
        "import socket\ns = socket.create_connection(('127.0.0.1', {tcp_port}), 2)\n"
        "s.sendall(b'ESCAPED'); print('ESCAPED')",
        _walls("audit", "seccomp", "netns", "landlock"),
    ),
    Case(
        "UDP to a local listener",
        "network",
        "send a datagram to a UDP listener the test runs",
        "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "s.sendto(b'ESCAPED', ('127.0.0.1', {udp_port})); print('ESCAPED')",
        _walls("audit", "seccomp", "netns"),
    ),
    Case(
        "unix socket outside",
        "network",
        "connect to a unix socket the test listens on, outside the workspace",
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('{unix_path}')\n"
        "s.sendall(b'ESCAPED'); print('ESCAPED')",
        _walls("audit", "seccomp", "process"),
    ),
    Case(
        "DNS lookup",
        "network",
        "resolve a host name (localhost: this host has no DNS to reach)",
        "import socket\nprint(socket.getaddrinfo('localhost', 80)); print('ESCAPED')",
        _walls("audit", "landlock"),
    ),
]

PROCESSES = [
    Case(
        "subprocess",
        "processes",
        "subprocess.run a shell command",
        "import subprocess\nsubprocess.run(['/bin/sh', '-c', 'echo x > ran'])",
        _walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "os.system",
        "processes",
        "os.system a shell command",
        "import os\nassert os.system('echo x > ran') == 0",
        _walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "fork",
        "processes",
        "os.fork a child process",
        "import os\npid = os.fork()\nif pid == 0: os._exit(0)\n"
        "os.waitpid(pid, 0); print('ESCAPED')",
        _walls("audit", "seccomp"),
    ),
    Case(
        "posix_spawn",
        "processes",
        "os.posix_spawn a shell",
        "import os\npid = os.posix_spawn('/bin/sh', ['sh', '-c', 'echo x > ran'], {{}})\n"
        "os.waitpid(pid, 0)",
        _walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "exec",
        "processes",
        "os.execv a shell in place of the interpreter",
        "import os\nos.execv('/bin/sh', ['sh', '-c', 'echo ESCAPED'])",
        _walls("audit", "seccomp", "landlock"),
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
        _walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "pty",
        "processes",
        "pty.fork a child on a pseudo-terminal",
        "import pty, os\npid, fd = pty.fork()\nif pid == 0: os._exit(0)\nprint('ESCAPED')",
        _walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "multiprocessing",
        "processes",
        "start a multiprocessing.Process",
        "import multiprocessing, os\np = multiprocessing.Process(target=os._exit, args=(0,))\n"
        "p.start(); p.join()\nif p.exitcode == 0: print('ESCAPED')",
        _walls("audit", "seccomp"),
    ),
    Case(
        "fork bomb",
        "processes",
        "fork six generations (64 processes), bounded so a failing wall costs little",
        "import os, time\nfor _ in range(6):\n    os.fork()\n    open('forks', 'a').write('x')\n"
        "time.sleep(30)",
        _walls("audit", "seccomp", "rlimits"),
        needs=_walls("process"),
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
        _walls("rlimits"),
        limits={"timeout_s": 4.0},
    ),
    Case(
        "kill the parent",
        "processes",
        "signal the parent process (signal 0: permission check only)",
        "import os; os.kill(os.getppid(), 0); print('ESCAPED')",
        _walls("audit", "seccomp", "landlock", "process"),
    ),
    Case(
        "raise a resource limit",
        "processes",
        "raise RLIMIT_NOFILE's hard limit",
        "import resource as r\nsoft, hard = r.getrlimit(r.RLIMIT_NOFILE)\n"
        "r.setrlimit(r.RLIMIT_NOFILE, (hard + 1, hard + 1))\n"
        "if r.getrlimit(r.RLIMIT_NOFILE)[1] > hard: print('ESCAPED')",
        _walls("audit", "seccomp", "process"),
        needs=_walls("rlimits"),
        host=_no_cap_sys_resource,
    ),
]

NATIVE = [
    Case(
        "ctypes system()",
        "native code",
        "call libc system() through ctypes",
        "import ctypes\nassert ctypes.CDLL(None).system(b'echo x > ran') == 0",
        _walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "ctypes removes the hook",
        "native code",
        "find the interpreter's audit-hook list in memory and empty it, then read "
        "/etc/passwd (the same code empties a plain audit hook: test_attacks_are_real)",
        UNHOOK,
        _walls("audit", "landlock"),
    ),
    Case(
        "ctypes left behind",
        "native code",
        "use ctypes types still loaded from the launcher (found by __subclasses__) to read memory",
        "cdata = [c for c in object.__subclasses__() if c.__name__ == '_SimpleCData']\n"
        "if not cdata:\n    import _ctypes; cdata = [_ctypes._SimpleCData]\n"
        "class B(cdata[0]): _type_ = 'B'\n"
        "x = b'ESCAPED'\n"
        "print(bytes(B.from_address(id(x) + 32 + i).value for i in range(7)).decode())",
        _walls("audit"),
    ),
    Case(
        "native module from the workspace",
        "native code",
        "copy a stdlib extension into the workspace and load it from there",
        "import importlib.machinery, importlib.util, shutil, _json\n"
        "shutil.copyfile(_json.__file__, 'evil.so')\n"
        "spec = importlib.util.spec_from_file_location('_json', 'evil.so')\n"
        "importlib.util.module_from_spec(spec); print('ESCAPED')",
        _walls("audit"),
    ),
    Case(
        "subinterpreter",
        "native code",
        "start a subinterpreter (it has no audit hooks of its own)",
        "import _xxsubinterpreters as s\ni = s.create(); s.run_string(i, 'pass'); print('ESCAPED')",
        _walls("audit", "runtime"),
    ),
]

INTROSPECTION = [
    Case(
        "__subclasses__ walk",
        "introspection",
        "reach os.system from object.__subclasses__() (os._wrap_close.__init__.__globals__)",
        "w = [c for c in object.__subclasses__() if c.__name__ == '_wrap_close'][0]\n"
        "assert w.__init__.__globals__['system']('echo x > ran') == 0",
        _walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "gc.get_objects walk",
        "introspection",
        "find the audit hook through gc.get_objects and rewrite it",
        "import gc\nfor f in gc.get_objects():\n"
        "    if type(f).__name__ == 'function' and f.__name__ == 'hook':\n"
        "        f.__code__ = (lambda *a: None).__code__\n"
        "print(open('/etc/passwd').read()); print('ESCAPED')",
        _walls("audit", "landlock"),
    ),
    Case(
        "hook frame tamper",
        "introspection",
        "take the hook's frame from a refusal's traceback and rewrite what it uses",
        "import builtins\ntry:\n    open('/etc/passwd')\nexcept PermissionError as e:\n"
        "    tb = e.__traceback__\n    while tb.tb_next: tb = tb.tb_next\n"
        "    fr = tb.tb_frame\n    fr.f_globals['PermissionError'] = None\n"
        "    builtins.PermissionError = None\n"
        "    for v in fr.f_locals.values():\n"
        "        if callable(v) and hasattr(v, '__defaults__'):\n"
        "            try: v.__defaults__ = None\n            except Exception: pass\n"
        "print(open('/etc/passwd').read()); print('ESCAPED')",
        _walls("audit", "landlock"),
    ),
    Case(
        "builtins patched",
        "introspection",
        "replace builtins and os functions the hook might call, then open a secret",
        "import builtins, os, posixpath\nbuiltins.isinstance = lambda *a: True\n"
        "builtins.type = lambda *a: str\nposixpath.realpath = lambda p, **k: 'ok'\n"
        "os.path.realpath = posixpath.realpath\n"
        "print(open('/etc/passwd').read()); print('ESCAPED')",
        _walls("audit", "landlock"),
    ),
]

IMPORTS = [
    Case(
        "import this package",
        "imports",
        "import datagauntlet (the parent's package, with its secrets-bearing code)",
        "import datagauntlet; print('ESCAPED')",
        _walls("process", "audit", "landlock"),
    ),
    Case(
        "import this package by path",
        "imports",
        "put the package's source directory on sys.path and import it",
        "import sys\nsys.path.insert(0, '{pkg_src}')\nimport datagauntlet; print('ESCAPED')",
        _walls("audit", "landlock"),
    ),
    Case(
        "importlib loader",
        "imports",
        "load the package's __init__.py with an importlib loader",
        "import importlib.machinery\n"
        "loader = importlib.machinery.SourceFileLoader(\n"
        "    'dg', '{pkg_src}/datagauntlet/__init__.py')\n"
        "if loader.get_code('dg'): print('ESCAPED')",
        _walls("audit", "landlock"),
    ),
    Case(
        "types.CodeType",
        "imports",
        "build a code object by hand (forged bytecode reads and writes memory)",
        "f = lambda: 0\nc = f.__code__.replace(co_code=f.__code__.co_code)\nprint('ESCAPED')",
        _walls("audit"),
    ),
    Case(
        "marshal gadget",
        "imports",
        "load bytecode with marshal.loads",
        "import marshal\ncode = marshal.loads(marshal.dumps(compile('x = 1', 'm', 'exec')))\n"
        "exec(code); print('ESCAPED')",
        _walls("audit"),
    ),
    Case(
        "pickle gadget",
        "imports",
        "unpickle a payload that calls os.system",
        "import pickle\nassert pickle.loads(b\"cos\\nsystem\\n(S'echo x > ran'\\ntR.\") == 0",
        _walls("audit", "seccomp", "landlock"),
    ),
]

RESOURCES = [
    Case(
        "memory bomb",
        "resources",
        "allocate 384 MB in 16 MB chunks (the limit is 256 MB of address space)",
        "chunks = [bytearray(16 << 20) for _ in range(24)]\nprint('ESCAPED')",
        _walls("rlimits"),
        limits={"timeout_s": 10.0},
    ),
    Case(
        "CPU spin",
        "resources",
        "spin forever (stopped by the CPU limit; the timeout is the fallback)",
        "while True: pass",
        _walls("rlimits"),
        # a loaded machine gives a spinning process a fraction of a core: room for 1 CPU s
        limits={"timeout_s": 8.0},
        escaped=_not_cpu,
        checked=_walls("rlimits"),  # without rlimits every run is the same 8 s timeout
    ),
    Case(
        "sleep forever",
        "resources",
        "sleep forever",
        "import time; time.sleep(3600)",
        _walls("supervisor"),
        limits={"timeout_s": 0.5},
        escaped=_never,
    ),
    Case(
        "10 GB write",
        "resources",
        "write a 10 GB file (sparse: seek, then one byte)",
        "f = open('big', 'wb')\nf.seek(10 << 30)\nf.write(b'x'); f.close(); print('ESCAPED')",
        _walls("rlimits"),
    ),
    Case(
        "100,000 open files",
        "resources",
        "hold 100,000 files open at once (the script stops at 2,000: far past the limit)",
        "fs = []\nfor i in range(100_000):\n    fs.append(open(f'f{{i}}', 'w'))\n"
        "    if i == 2000: print('ESCAPED'); break",
        _walls("rlimits"),
        limits={"timeout_s": 6.0},
    ),
    Case(
        "100,000 files created",
        "resources",
        "create 100,000 files (the timeout stops it)",
        "for i in range(100_000):\n    open(f'f{{i}}', 'w').close()\nprint('ESCAPED')",
        _walls("supervisor"),
        limits={"timeout_s": 0.5},
        escaped=_count_files,
    ),
    Case(
        "stdout flood",
        "resources",
        "print without end (capped, then killed past the flood limit)",
        "import sys\nwhile True: sys.stdout.write('x' * 65536)",
        _walls("supervisor"),
        escaped=_never,
    ),
    Case(
        "recursion crash",
        "resources",
        "recurse in C until the interpreter crashes (SIGSEGV), contained by the process",
        "import json, sys\nsys.setrecursionlimit(10 ** 8)\nx = []\n"
        "for _ in range(200_000): x = [x]\nprint(json.dumps(x, check_circular=False)[:5])\n"
        "print('ESCAPED')",
        _walls("supervisor"),
        escaped=_never,
    ),
    Case(
        "silence the report channel",
        "resources",
        "close every inherited fd, then try an escape so the refusal goes unrecorded",
        "import os\nos.closerange(3, 256)\nopen('/etc/passwd')",
        _walls("seccomp"),
        needs=_walls("audit"),
        escaped=_unrecorded,
    ),
]

CASES = FILES + NETWORK + PROCESSES + NATIVE + INTROSPECTION + IMPORTS + RESOURCES
GROUPS = ("files", "network", "processes", "native code", "introspection", "imports", "resources")


COLUMNS = ("process", "rlimits", "audit", "seccomp", "landlock", "netns")
OTHER = {
    "supervisor": "supervisor",
    "runtime": "not in the sandbox's interpreter",
}


def render_table() -> str:
    """The wall-by-case table of docs/sandbox.md: one row per case, a mark per stopping wall."""
    head = "| case | attack | " + " | ".join(COLUMNS) + " | also |"
    rule = "|---|---|" + "---|" * len(COLUMNS) + "---|"
    rows = [head, rule]
    for group in GROUPS:
        for case in (c for c in CASES if c.group == group):
            marks = " | ".join("■" if w in case.stoppers else "" for w in COLUMNS)
            also = [OTHER[w] for w in sorted(case.stoppers & ALWAYS)]
            if case.host:
                also.append("host: root without CAP_SYS_RESOURCE")
            if case.needs:
                also.append("kept up: " + ", ".join(sorted(case.needs)))
            rows.append(f"| {case.name} | {case.what} | {marks} | {'; '.join(also)} |")
    return "\n".join(rows)
