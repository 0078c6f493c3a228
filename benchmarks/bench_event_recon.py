"""event-recon speed: a reference episode, the gate suite, and the verifiers door per rollout.

    python benchmarks/bench_event_recon.py [--tasks 12] [--gates [--write]] [--workers 2] [--vf 8]

1. A reference episode end to end (world from the cache, workspace, every tool call, the
   graded script in the sandbox, grading), median over `--tasks` public tasks, printed next to
   its floor measured in the same run: the null episode (a workspace and one graded no-op
   script) and a bare `python -I -S -c pass` start. Target: under 2 s.
2. `--gates`: the full gate run over the 120 public tasks (`gate_report --workers N`, the run
   `make gates` writes; `--write` rewrites docs/envs/event-recon-gates.json and the README
   table), wall clock next to its first step's time (every policy played once on every task),
   and the three slowest gates. Target: under 10 minutes on 2 cores.
3. `--vf N`: N rollouts through verifiers (the in-package tool-only harness) against the
   scripted model replaying the reference: per-rollout wall time and overhead (wall minus
   model time), from benchmarks/bench_frontdoors.py.
Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import datagauntlet as dg

HERE = Path(__file__).resolve().parent
if TYPE_CHECKING:
    from benchlib import Report


def _timed_episode(env: dg.Environment, policy: str, task: dg.Task) -> tuple[float, float]:
    env.world(task)  # type: ignore[attr-defined]  # generation is the world's benchmark
    start = time.perf_counter()
    ep = env.episode(task)
    try:
        env.policies()[policy](ep)
        reward = ep.score().reward
    finally:
        ep.close()
    return time.perf_counter() - start, reward


def bare_python_s(k: int = 10) -> float:
    out = []
    for _ in range(k):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        out.append(time.perf_counter() - start)
    return statistics.median(out)


def episodes(report: Report, n: int) -> None:
    env = dg.make("event-recon")
    tasks = env.tasks("public")
    step = max(1, len(tasks) // n)
    sample = tasks[::step][:n]
    ref = [_timed_episode(env, env.reference, t) for t in sample]
    null = [_timed_episode(env, "null", t) for t in sample]
    ref_ms = 1000 * statistics.median(s for s, _ in ref)
    null_ms = 1000 * statistics.median(s for s, _ in null)
    bare_ms = 1000 * bare_python_s()
    report.add(f"reference episode, median of {len(sample)} (target < 2000)", ref_ms, "ms",
               null_ms, "null episode")  # fmt: skip
    report.add("reference episode, slowest", 1000 * max(s for s, _ in ref), "ms", bare_ms,
               "bare python start")  # fmt: skip
    report.add("reference rewards all 1.0", str(all(r == 1.0 for _, r in ref)))


PLAY_ALL = "(every policy on every task)"  # gate_report's first timing


def gates(report: Report, workers: int, write: bool) -> None:
    """The full gate run (the one `make gates` writes), timed; the floor is its first step, every
    policy played once on every task (what the gates then add is theirs)."""
    cmd = [sys.executable, "-m", "datagauntlet.envs.event_recon.gates.gate_report",
           "--workers", str(workers), "--json", *(["--write"] if write else [])]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if not proc.stdout.strip():
        report.add("gate suite", f"FAILED (exit {proc.returncode}): {proc.stderr[-200:]}")
        return
    run = json.loads(proc.stdout)
    passing = sum(1 for r in run["rows"] if r["ok"])
    report.add(
        f"gate suite, {run['tasks']} public tasks, --workers {workers} (target < 600)",
        seconds, "s", run["gate_seconds"].get(PLAY_ALL), "every policy on every task once",
    )  # fmt: skip
    slowest = sorted(run["gate_seconds"].items(), key=lambda kv: -kv[1])[:3]
    for name, s in slowest:
        report.add(f"  gate {name}", s, "s")
    report.add("gate rows passing", f"{passing}/{len(run['rows'])}")
    report.note(f"load average {run['loadavg'][0]} -> {run['loadavg'][1]} during the gate run")


def vf(report: Report, n: int) -> None:
    from bench_frontdoors import overhead_rows, start_mock, vf_rollouts

    proc, base_url = start_mock("event-recon")
    try:
        rows = overhead_rows(asyncio.run(vf_rollouts("event-recon", base_url, n, 1)))
    finally:
        proc.terminate()
        proc.wait()
    report.add(f"verifiers rollout wall, mean of {rows['rollouts']}", rows["wall_ms_mean"], "ms",
               rows["model_ms_mean"], "the scripted model's time")  # fmt: skip
    report.add("verifiers rollout model time", rows["model_ms_mean"], "ms")
    report.add("verifiers overhead per rollout (wall - model)", rows["overhead_ms_mean"], "ms")
    report.add("  of which setup (the world, the workspace)", rows["setup_ms_mean"], "ms")
    report.add("  of which tool calls", rows["tool_calls_ms_mean"], "ms")
    report.add("  of which scoring (the graded script)", rows["finalize_and_scoring_ms_mean"], "ms")
    report.add("verifiers rewards all 1.0", str(rows["rewards_all_1"]))


def main() -> None:
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--gates", action="store_true", help="time the full gate suite")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--write", action="store_true", help="with --gates: rewrite the committed gate results"
    )
    parser.add_argument("--vf", type=int, default=0, help="verifiers rollouts to time")
    args = parser.parse_args()
    sys.path.append(str(HERE))
    from benchlib import Report

    report = Report("event-recon speed")
    episodes(report, args.tasks)
    if args.gates:
        gates(report, args.workers, args.write)
    if args.vf:
        vf(report, args.vf)
    report.show()


if __name__ == "__main__":
    main()
