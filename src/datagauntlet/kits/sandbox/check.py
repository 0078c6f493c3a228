"""`sandbox check`: which walls this host raises, each shown to hold by an escape only it stops.

A wall the launcher reports up is not taken on its word: for each wall, a probe script runs
with that wall alone and tries something only that wall refuses. A wall is reported as
standing when it was up in the all-walls run and its probe was refused.
"""

from __future__ import annotations

import os
import socket
import statistics
import time
from typing import Any

from datagauntlet.kits.sandbox.limits import Limits
from datagauntlet.kits.sandbox.result import SandboxResult
from datagauntlet.kits.sandbox.runner import run_script
from datagauntlet.kits.sandbox.walls import DESCRIPTIONS, WALLS
from datagauntlet.kits.sandbox.workspace import fresh_workspace

PROBE_LIMITS = Limits(timeout_s=10.0, cpu_s=5, memory_mb=512, output_bytes=4096)
SCRUBBED_ENV = {"HOME", "TMPDIR", "SQLITE_TMPDIR", "TZ", "LANG", "PATH", "LC_CTYPE"}

PROBES = {
    "process": "import os; print(os.geteuid()); print(','.join(sorted(os.environ)))",
    "rlimits": "import resource as r\nprint(r.getrlimit(r.RLIMIT_CORE), r.getrlimit(r.RLIMIT_AS))",
    "audit": "print(open('/etc/passwd').read(4))",
    "seccomp": "import os\npid = os.fork()\nif pid == 0: os._exit(0)\nprint('forked')",
    "landlock": "print(open('/etc/passwd').read(4))",
    "netns": "import socket\nsocket.create_connection(('127.0.0.1', {port}), 3)\nprint('up')",
}


def _held(wall: str, res: SandboxResult, parent_root: bool) -> bool:
    if wall == "process":
        lines = res.stdout.split("\n")
        if res.exit_code != 0 or len(lines) < 2:
            return False
        env = set(filter(None, lines[1].split(",")))
        return (lines[0] != "0" or not parent_root) and env <= SCRUBBED_ENV
    if wall == "rlimits":
        expected = f"(0, 0) ({PROBE_LIMITS.memory_mb << 20}, {PROBE_LIMITS.memory_mb << 20})"
        return res.stdout.strip() == expected
    if wall == "audit":
        return "root" not in res.stdout and any(v.wall == "audit" for v in res.violations)
    if wall == "seccomp":
        return "forked" not in res.stdout and "Operation not permitted" in res.stderr
    if wall == "landlock":
        return "root" not in res.stdout and "Permission denied" in res.stderr
    if wall == "netns":
        return "up" not in res.stdout and "unreachable" in res.stderr
    raise ValueError(wall)


def check_host() -> dict[str, Any]:
    """Every wall: up in a full run, and shown to hold alone. Also the print(1) round trip."""
    parent_root = os.geteuid() == 0
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        with fresh_workspace() as ws:
            full = run_script("print(1)", ws, PROBE_LIMITS)
            times = []
            for _ in range(5):
                start = time.perf_counter()
                run_script("print(1)", ws, PROBE_LIMITS)
                times.append(time.perf_counter() - start)
            rows = []
            for wall in WALLS:
                code = PROBES[wall].replace("{port}", str(port))
                res = run_script(code, ws, PROBE_LIMITS, walls=(wall,))
                up = wall in full.walls
                held = _held(wall, res, parent_root) if wall in res.walls else False
                rows.append(
                    {
                        "wall": wall,
                        "up": up and held,
                        "held": held if up else None,
                        "detail": _detail(wall, full),
                        "probe": _probe_summary(res),
                        "what": DESCRIPTIONS[wall],
                    }
                )
        try:
            listener.accept()
            accepted = True
        except BlockingIOError:
            accepted = False
    finally:
        listener.close()
    if accepted:  # the netns probe got through after all
        for row in rows:
            if row["wall"] == "netns":
                row["up"] = row["held"] = False
    return {
        "all_up": all(r["up"] for r in rows),
        "walls": rows,
        "round_trip_ms": statistics.median(times) * 1000,
        "uid": os.geteuid(),
    }


def _detail(wall: str, res: SandboxResult) -> str:
    return res.wall_notes.get(wall) or res.walls_down.get(wall) or "down"


def _probe_summary(res: SandboxResult) -> str:
    last = res.stderr.strip().splitlines()[-1:] or res.stdout.strip().splitlines()[-1:]
    return last[0][:160] if last else f"exit {res.exit_code}"
