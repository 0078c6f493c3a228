"""One timed `mutmut run` for scripts/mutation_report.py (`run`): in a PID namespace of its own
where this process may make one, the machine's load sampled while it runs, mutants killed by
SIGKILL judged again alone, and the times kept in mutants/run-times.json (appended to
mutants/runs.jsonl) for the report.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parents[1]
TIMES = ROOT / "mutants" / "run-times.json"
RUNS = ROOT / "mutants" / "runs.jsonl"  # every timed run since `mutants/` was made
LOG = ROOT / "mutants" / "mutmut-run.log"
LOAD_LOG = ROOT / "mutants" / "loadavg.jsonl"  # /proc/loadavg sampled during a run
LOAD_EVERY_S = 15.0
# mutmut's children wait on sandboxed runs and process start-up: at 2 they kept the 2 cores
# about 60% idle, at 4 they keep them busy (each mutant's CPU is capped by tests/conftest.py).
WORKERS = int(os.environ.get("DATAGAUNTLET_MUTATION_WORKERS", "4"))


def mutmut_executable() -> str:
    """The mutmut beside this interpreter (the venv's), whatever PATH says."""
    return str(Path(sys.executable).with_name("mutmut"))


# A mutant of the sandbox runner's process sweeps (as root: kill by uid, by process group) can
# signal every process it sees. In a PID namespace of its own, with its own /proc, the run sees
# and can signal only what it started, and everything in it ends with the run.
ISOLATION = ["unshare", "--pid", "--mount-proc", "--kill-child"]
# The namespace's init: starts mutmut and reaps every process orphaned to it (mutmut itself
# waits for any child, so it must not be the one orphans are handed to).
_INIT = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
while True:
    got, status = os.wait()
    if got == pid:
        sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def isolated(argv: list[str]) -> list[str]:
    """`argv` inside a PID namespace of its own, when this process may make one (root, with
    util-linux's unshare); else `argv` as it is, with a warning on stderr."""
    if os.geteuid() == 0 and shutil.which(ISOLATION[0]):
        return [*ISOLATION, sys.executable, "-c", _INIT, *argv]
    print(
        "warning: mutmut runs without a PID namespace of its own (that needs root and unshare): "
        "a mutant of kits/sandbox's process sweeps (sweeps.py and its callers) can signal "
        "processes outside the run",
        file=sys.stderr,
    )
    return argv


def _sigkilled() -> list[str]:
    """Mutants whose tests were killed by SIGKILL (mutmut's "segfault", exit -9)."""
    found = []
    for meta in (ROOT / "mutants").glob("**/*.py.meta"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            codes = json.loads(meta.read_text())["exit_code_by_key"]
            found += [name for name, code in codes.items() if code == -9]
    return sorted(found)


def _load() -> tuple[float, float, float]:
    return tuple(float(x) for x in Path("/proc/loadavg").read_text().split()[:3])  # type: ignore[return-value]


def _idle_jiffies() -> tuple[int, int]:
    """(idle, total) CPU jiffies of the whole machine since boot, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[3] + fields[4], sum(fields)


def _sample_load(start: float, log: TextIO, seen: list[float]) -> None:
    idle, total = _idle_jiffies()
    load = _load()
    seen.append(load[0])
    line = {"t_s": round(time.monotonic() - start, 1), "load": load, "idle_jiffies": idle}
    log.write(json.dumps(line | {"total_jiffies": total}) + "\n")
    log.flush()


def _sampled(argv: list[str], log: TextIO, start: float, samples: TextIO, seen: list[float]) -> int:
    """Run argv to its end, sampling the load average every LOAD_EVERY_S seconds."""
    child = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    while True:
        _sample_load(start, samples, seen)
        try:
            return child.wait(timeout=LOAD_EVERY_S)
        except subprocess.TimeoutExpired:
            continue


def run(mutants: list[str]) -> int:
    """One `mutmut run` (all mutants not yet judged, or the named ones), timed, load sampled."""
    (ROOT / "mutants").mkdir(exist_ok=True)
    judged_before = _judged()
    load_before = _load()
    idle_before, total_before = _idle_jiffies()
    start = time.monotonic()
    seen: list[float] = []
    with LOG.open("w") as log, LOAD_LOG.open("a") as samples:
        argv = [mutmut_executable(), "run", "--max-children", str(WORKERS), *mutants]
        code = _sampled(isolated(argv), log, start, samples, seen)
        # A mutant that SIGKILLs its siblings would pass its kill off as theirs: every mutant
        # killed that way is judged again alone, where only its own tests can die of it.
        again = _sigkilled()
        if code == 0 and again:
            argv = [mutmut_executable(), "run", "--max-children", "1", *again]
            code = _sampled(isolated(argv), log, start, samples, seen)
        _sample_load(start, samples, seen)
    wall = time.monotonic() - start
    idle_after, total_after = _idle_jiffies()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    times = {
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "workers": WORKERS,
        "cores": os.cpu_count() or 1,
        "load_before": load_before,
        "load_after": _load(),
        "load_sampled": [min(seen), round(sum(seen) / len(seen), 2), max(seen)],  # min, mean, max
        # the machine's busy share over the run, every process counted (neighbours too)
        "machine_busy": round(
            1 - (idle_after - idle_before) / max(1, total_after - total_before), 3
        ),
        "nice": os.nice(0),
        "mutants_named": len(mutants),
        "isolated": isolated(["x"]) != ["x"],
        "judged_again_alone": again,
        "judged_before": judged_before,
        "judged_after": _judged(),
    }
    TIMES.write_text(json.dumps(times, indent=1) + "\n")
    with RUNS.open("a") as runs:
        runs.write(json.dumps(times) + "\n")
    if code != 0:
        tail = LOG.read_text(errors="replace").replace("\r", "\n").splitlines()[-15:]
        print(f"mutmut run exited {code}; the end of {LOG.relative_to(ROOT)}:", file=sys.stderr)
        print("\n".join(tail), file=sys.stderr)
    return code


def _judged() -> int:
    """Mutants with a verdict so far (mutmut keeps them in mutants/**/*.meta)."""
    count = 0
    for meta in (ROOT / "mutants").glob("**/*.py.meta"):
        with contextlib.suppress(OSError, ValueError):
            codes = json.loads(meta.read_text())["exit_code_by_key"].values()
            count += sum(1 for c in codes if c is not None)
    return count
