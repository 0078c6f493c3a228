"""Run agent-written Python for event-recon: exploratory `run_python` and the graded script.

One function, `run_script`, is the env's only way to execute agent code. It runs the script in
a separate process whose working directory is a throwaway copy of the workspace, under the
walls this module can raise by itself: `python -I -S` with a scrubbed environment, a new
session whose whole process group a timeout kills, and rlimits on CPU, address space, file
size, open files and core dumps. The sandbox kit (kits/sandbox) adds the audit hook, seccomp,
Landlock and the network namespace; when it is present it is used instead (see `_kit`).
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

STDOUT_CHARS = 200_000
STDERR_CHARS = 20_000
MEMORY_BYTES = 2 * 1024**3
OPEN_FILES = 256


@dataclass(frozen=True)
class Walls:
    """What a run may spend. `file_bytes` bounds every file it writes (RLIMIT_FSIZE)."""

    wall_seconds: float
    cpu_seconds: float
    file_bytes: int = 256 * 1024**2
    memory_bytes: int = MEMORY_BYTES


@dataclass(frozen=True)
class RunResult:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    wall_s: float
    cpu_s: float
    violations: list[str] = field(default_factory=list)
    walls: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.violations

    def for_agent(self, hide: str, shown_as: str) -> dict[str, object]:
        """What the agent sees: no timing and no host path, so the same code always gets the
        same answer (a replayed trajectory must see identical results)."""
        return {
            "exit_code": self.exit_code,
            "stdout": self.stdout.replace(hide, shown_as),
            "stderr": self.stderr.replace(hide, shown_as),
            "timed_out": self.timed_out,
            "truncated": self.truncated,
            "violations": [v.replace(hide, shown_as) for v in self.violations],
        }


WALLS_UP = ["process", "rlimits"]


def _limits(walls: Walls) -> None:  # runs in the child between fork and exec
    cpu = max(1, int(walls.cpu_seconds + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))  # SIGXCPU first, then SIGKILL
    resource.setrlimit(resource.RLIMIT_AS, (walls.memory_bytes, walls.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (walls.file_bytes, walls.file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _read_capped(path: Path, limit: int) -> tuple[str, bool]:
    with path.open("rb") as fh:
        data = fh.read(limit * 4 + 1)
    text = data.decode("utf-8", errors="replace")
    cut = len(text) > limit or path.stat().st_size > len(data)
    return text[:limit], cut


def run_script(workdir: Path, script: str, walls: Walls) -> RunResult:
    """Run `script` (a path relative to `workdir`) with `workdir` as its working directory."""
    with tempfile.TemporaryDirectory(prefix="er-out-") as out_dir:
        out = Path(out_dir) / "stdout"
        err = Path(out_dir) / "stderr"
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        start = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with out.open("wb") as fo, err.open("wb") as fe:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", script],
                cwd=workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=fo,
                stderr=fe,
                start_new_session=True,
                preexec_fn=lambda: _limits(walls),
                close_fds=True,
            )
            timed_out = False
            try:
                proc.wait(timeout=walls.wall_seconds)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        stdout, cut_out = _read_capped(out, STDOUT_CHARS)
        stderr, cut_err = _read_capped(err, STDERR_CHARS)
    code = proc.returncode
    if code is not None and code < 0 and -code in (signal.SIGXCPU, signal.SIGKILL):
        timed_out = timed_out or -code == signal.SIGXCPU or cpu >= walls.cpu_seconds
    return RunResult(
        exit_code=None if timed_out else code,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        truncated=cut_out or cut_err,
        wall_s=wall,
        cpu_s=max(0.0, cpu),
        walls=list(WALLS_UP),
    )
