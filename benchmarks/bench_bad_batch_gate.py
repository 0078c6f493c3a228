"""bad-batch-gate speed: episodes per second per agent, world set-up time, memory per live
episode. Prints figures; not a test. Run: .venv/bin/python benchmarks/bench_bad_batch_gate.py"""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path

import datagauntlet as dg
from datagauntlet.envs.bad_batch_gate.generator import generate
from datagauntlet.envs.bad_batch_gate.world import Warehouse

SHARED = Path(
    os.environ.get("DATAGAUNTLET_SHARED", Path(__file__).resolve().parents[1] / ".." / "shared")
)
FIXTURE = SHARED / "fixtures" / "bad-batch-gate" / "eval_curated.jsonl"
LIVE = 1_000


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def per_agent(env: dg.Environment, label: str, repeat: int = 3) -> float:
    tasks = env.tasks("eval")
    total = 0.0
    print(f"\n{label}: {len(tasks)} cases, episodes per second (best of {repeat})")
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
        print(f"  {name:22s} {len(tasks) / best:8.0f} /s")
    print(f"  all {len(env.policies())} policies x {len(tasks)} cases: {total:.3f} s")
    return total


def setup_time() -> None:
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
    print(
        f"\nworld set-up: warehouse {warehouse * 1000:.2f} ms, case generation {gen * 1000:.2f} ms"
    )


def memory() -> None:
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
    print(
        f"\n{len(live)} live episodes (careful played): +{grew:.0f} MiB, "
        f"{grew * 1024 / len(live):.0f} KiB each"
    )


def main() -> int:
    print(f"python {sys.version.split()[0]}, one process, one core")
    if FIXTURE.is_file():
        per_agent(dg.make("bad-batch-gate", cases=str(FIXTURE)), "original fixture")
    else:
        print(f"(fixture not found at {FIXTURE}; skipping its figures)")
    per_agent(dg.make("bad-batch-gate"), "generated eval (standard)")
    per_agent(dg.make("bad-batch-gate", families="extended"), "generated eval (extended)")
    setup_time()
    memory()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
