"""`calibrate --workers 2` against `--workers 1` on the full default calibration (every env).

    .venv/bin/python benchmarks/bench_calibrate.py [--rounds 1]

Each run is a child process playing every env's default grid through one ProcessMapper (what
`datagauntlet calibrate --workers K` does), rounds interleaved (1, 2, 1, 2, ...). Besides wall
time, each child reports CPU per process: its own, and each worker's (children included: the
sandbox runs of event-recon). On a shared machine wall time says little about a pool: the
scheduler shares CPU between sessions, not processes, so a second worker mostly takes turns
with the first. CPU time does not depend on the load, so the figure to judge is the CPU on the
longest path (the parent plus the busiest worker) against half the CPU of one worker: the
speedup two idle cores would give. Both runs' JSON must be byte-identical.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchlib import Figure, Report

CLOCK = os.sysconf("SC_CLK_TCK")
SPLIT = "half of --workers 1 (a perfect split)"

FIGURES = (
    Figure("w1-cpu", "`calibrate`, every env's default grid, --workers 1: CPU", "s"),
    Figure("w2-path-cpu", "--workers 2: CPU on the longest path (parent + busiest worker)",
           "s", SPLIT, max_ratio=round(2 / 1.7, 3)),
    Figure("w2-total-cpu", "--workers 2: CPU of every process", "s", "--workers 1 CPU"),
    Figure("cpu-speedup", "speedup two idle cores give (CPU, longest path)", "x",
           better="higher", target=1.7),
    Figure("w1-wall", "--workers 1: wall", "s"),
    Figure("w2-wall", "--workers 2: wall (loaded machine: sessions share CPU)", "s", SPLIT),
)  # fmt: skip


def proc_cpu(pid: int | str) -> float:
    """User + system CPU of a process and of its reaped children, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / CLOCK


def child(workers: int) -> dict[str, Any]:
    """One calibration of every env (as `calibrate --json` would), measured from inside."""
    start = time.perf_counter()
    import datagauntlet as dg
    from datagauntlet.core.runner import ProcessMapper, start_calibration

    mapper = ProcessMapper(workers) if workers > 1 else None
    digest = hashlib.sha256()
    worker_cpu: list[float] = []
    try:
        envs = [dg.make(env_id) for env_id in dg.list_envs()]
        # as `calibrate` does: with a pool, every env's jobs are queued before any is read
        pending = [start_calibration(env, mapper=mapper) for env in envs] if mapper else []
        for i, env in enumerate(envs):
            rows = (pending[i] if mapper else start_calibration(env)).rows()
            block = {"env": env.id, "versions": env.versions(), "rows": [r.as_dict() for r in rows]}
            digest.update(json.dumps(block, sort_keys=True).encode())
        if mapper is not None and mapper._pool is not None:
            worker_cpu = [proc_cpu(pid) for pid in mapper._pool._processes]
    finally:
        if mapper is not None:
            mapper.close()
    own = os.times()
    parent = own.user + own.system
    children = own.children_user + own.children_system
    return {
        "wall": time.perf_counter() - start,
        "parent_cpu": parent,
        "total_cpu": parent + children,
        # with workers, the sandbox children are theirs (counted in worker_cpu); without, ours
        "path_cpu": parent + (max(worker_cpu) if worker_cpu else children),
        "worker_cpu": worker_cpu,
        "digest": digest.hexdigest(),
    }


def measure(workers: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(workers)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    report = Report("calibrate: --workers 2 against --workers 1", FIGURES)
    runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    for _ in range(args.rounds):
        for workers in (1, 2):
            runs[workers].append(measure(workers))

    def med(workers: int, key: str) -> float:
        return statistics.median(r[key] for r in runs[workers])

    report.add("w1-cpu", med(1, "path_cpu"))
    report.add("w2-path-cpu", med(2, "path_cpu"), floor=med(1, "path_cpu") / 2)
    report.add("w2-total-cpu", med(2, "total_cpu"), floor=med(1, "total_cpu"))
    report.add("cpu-speedup", med(1, "path_cpu") / med(2, "path_cpu"))
    report.add("w1-wall", med(1, "wall"))
    report.add("w2-wall", med(2, "wall"), floor=med(1, "wall") / 2)
    digests = {r["digest"] for rs in runs.values() for r in rs}
    report.add("results byte-identical across worker counts", str(len(digests) == 1))
    report.note(f"median of {args.rounds} interleaved round(s)")
    report.show()
    if len(digests) != 1:
        raise SystemExit("calibration results differ between worker counts")


if __name__ == "__main__":
    main()
