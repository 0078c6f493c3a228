"""Escape-battery attacks on resources: memory, CPU, disk, open files, output, the interpreter's
stack, and the report channel itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from battery_case import Case, walls


def _count_files(res: Any, ws: Path, ctx: Any) -> bool:
    return sum(1 for _ in ws.iterdir()) >= 100_000


def _not_cpu(res: Any, ws: Path, ctx: Any) -> bool:
    return not any(v.event == "cpu" for v in res.violations) and res.cpu_s >= 1.0


def _never(res: Any, ws: Path, ctx: Any) -> bool:
    return False


def _unrecorded(res: Any, ws: Path, ctx: Any) -> bool:
    return not any(v.wall == "audit" for v in res.violations)


RESOURCES = [
    Case(
        "memory bomb",
        "resources",
        "allocate 384 MB in 16 MB chunks (the limit is 256 MB of address space)",
        "chunks = [bytearray(16 << 20) for _ in range(24)]\nprint('ESCAPED')",
        walls("rlimits"),
        limits={"timeout_s": 10.0},
    ),
    Case(
        "CPU spin",
        "resources",
        "spin forever (stopped by the CPU limit; the timeout is the fallback)",
        "while True: pass",
        walls("rlimits"),
        # a loaded machine gives a spinning process a fraction of a core: room for 1 CPU s
        limits={"timeout_s": 8.0},
        escaped=_not_cpu,
        checked=walls("rlimits"),  # without rlimits every run is the same 8 s timeout
    ),
    Case(
        "sleep forever",
        "resources",
        "sleep forever",
        "import time; time.sleep(3600)",
        walls("supervisor"),
        limits={"timeout_s": 0.5},
        escaped=_never,
    ),
    Case(
        "10 GB write",
        "resources",
        "write a 10 GB file (sparse: seek, then one byte)",
        "f = open('big', 'wb')\nf.seek(10 << 30)\nf.write(b'x'); f.close(); print('ESCAPED')",
        walls("rlimits"),
    ),
    Case(
        "100,000 open files",
        "resources",
        "hold 100,000 files open at once (the script stops at 2,000: far past the limit)",
        "fs = []\nfor i in range(100_000):\n    fs.append(open(f'f{{i}}', 'w'))\n"
        "    if i == 2000: print('ESCAPED'); break",
        walls("rlimits"),
        limits={"timeout_s": 6.0},
    ),
    Case(
        "100,000 files created",
        "resources",
        "create 100,000 files (the timeout stops it)",
        "for i in range(100_000):\n    open(f'f{{i}}', 'w').close()\nprint('ESCAPED')",
        walls("supervisor"),
        limits={"timeout_s": 0.5},
        escaped=_count_files,
    ),
    Case(
        "stdout flood",
        "resources",
        "print without end (capped, then killed past the flood limit)",
        "import sys\nwhile True: sys.stdout.write('x' * 65536)",
        walls("supervisor"),
        escaped=_never,
    ),
    Case(
        "recursion crash",
        "resources",
        "recurse in C until the interpreter crashes (SIGSEGV), contained by the process",
        "import json, sys\nsys.setrecursionlimit(10 ** 8)\nx = []\n"
        "for _ in range(200_000): x = [x]\nprint(json.dumps(x, check_circular=False)[:5])\n"
        "print('ESCAPED')",
        walls("supervisor"),
        escaped=_never,
    ),
    Case(
        "silence the report channel",
        "resources",
        "close every inherited fd, then try an escape so the refusal goes unrecorded",
        "import os\nos.closerange(3, 256)\nopen('/etc/passwd')",
        walls("seccomp"),
        needs=walls("audit"),
        escaped=_unrecorded,
    ),
]
