"""bad-batch-gate speed: episodes per second per agent, world set-up time, memory per live
episode. Prints figures; not a test. Run: .venv/bin/python benchmarks/bench_bad_batch_gate.py"""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path

import toolpath
from benchlib import Figure, Report

import datagauntlet as dg
from datagauntlet.envs.bad_batch_gate.world.generator import generate
from datagauntlet.envs.bad_batch_gate.world.warehouse import Warehouse

SHARED = Path(
    os.environ.get("DATAGAUNTLET_SHARED", Path(__file__).resolve().parents[1] / ".." / "shared")
)
FIXTURE = SHARED / "fixtures" / "bad-batch-gate" / "eval_curated.jsonl"
LIVE = 1_000


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def per_agent(env: dg.Environment, label: str, report: Report, repeat: int = 3) -> float:
    tasks = env.tasks("eval")
    total = 0.0
    for name, policy in env.policies().items():
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            for task in tasks:
                ep = env.episode(task)
                policy(ep)
                ep.score()
            best = min(best, time.perf_counter() - start)
        total += best
        report.add(f"{label}: {name}", len(tasks) / best, f"episodes/s (best of {repeat})")
    report.add(f"{label}: all {len(env.policies())} policies x {len(tasks)} cases", total, "s")
    return total


def setup_time(report: Report) -> None:
    env = dg.make("bad-batch-gate")
    tasks = env.tasks("test")
    cases = [env.case(t) for t in tasks]
    start = time.perf_counter()
    for case in cases:
        Warehouse(case).close()
    warehouse = (time.perf_counter() - start) / len(cases)
    generate.cache_clear()
    start = time.perf_counter()
    for t in tasks:
        generate(t.split, t.index, t.seed, False)
    gen = (time.perf_counter() - start) / len(tasks)
    report.add("world set-up: warehouse", warehouse * 1000, "ms")
    report.add("world set-up: case generation", gen * 1000, "ms")


def memory(report: Report) -> None:
    env = dg.make("bad-batch-gate")
    tasks = (env.tasks("test") + env.tasks("train")) * 2
    gc.collect()
    before = rss_mib()
    live = []
    for task in tasks[:LIVE]:
        ep = env.episode(task)
        env.policies()["careful"](ep)
        live.append(ep)
    gc.collect()
    grew = rss_mib() - before
    report.add(f"{len(live)} live episodes (careful played)", grew, "MiB")
    report.add("memory per live episode", grew * 1024 / len(live), "KiB")


FIGURES = (
    Figure(
        "run-sql",
        "run_sql env cost per call (median, careful's queries)",
        "us",
        floor="raw SQLite, the same query on a copy of the db",
        target=25,
        max_ratio=2,
    ),
)


def main() -> int:
    report = Report("bad-batch-gate speed", FIGURES)
    report.note(f"python {sys.version.split()[0]}, one process, one core")
    if FIXTURE.is_file():
        per_agent(dg.make("bad-batch-gate", cases=str(FIXTURE)), "original fixture", report)
    else:
        report.note(f"fixture not found at {FIXTURE}: its figures skipped")
    per_agent(dg.make("bad-batch-gate"), "generated eval (standard)", report)
    per_agent(dg.make("bad-batch-gate", families="extended"), "generated eval (extended)", report)
    sql = toolpath.run_sql_cost()
    report.add("run-sql", sql.value_us, floor=sql.floor_us)
    setup_time(report)
    memory(report)
    report.note(f"load average {toolpath.load()}")
    report.show()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
