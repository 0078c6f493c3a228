"""event-recon world speed: generating, invariant-checking and cross-checking the 120 public
tasks on one core, and materialising one workspace. Each figure is printed next to its floor
measured in the same run. Not a test. Run: .venv/bin/python benchmarks/bench_event_recon_world.py
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from datagauntlet.envs.event_recon import zones
from datagauntlet.envs.event_recon.base_world import base_draft
from datagauntlet.envs.event_recon.generator import cross_check, generate
from datagauntlet.envs.event_recon.plan import run
from datagauntlet.envs.event_recon.records import FILES
from datagauntlet.envs.event_recon.splits import public_tasks
from datagauntlet.envs.event_recon.workspace import materialize

GENERATION_TARGET_S = 30.0
MATERIALIZE_TARGET_MS = 100.0


def one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned (no sched_setaffinity)"


def main() -> None:
    print(f"event-recon world ({one_core()}; zones from {zones.source()})")
    records = public_tasks()

    start = time.perf_counter()
    for r in records:
        run(base_draft(r.seed, r.tier))
    floor = time.perf_counter() - start

    start = time.perf_counter()
    worlds = [generate(r.seed, r.tier) for r in records]
    generated = time.perf_counter() - start
    start = time.perf_counter()
    projections = sum(cross_check(w) for w in worlds)
    checked = time.perf_counter() - start
    total = generated + checked
    attempts = sum(w.attempts for w in worlds)
    print(
        f"  120 public tasks, generated + ten conditions + cross-check: {total:.2f} s "
        f"(target < {GENERATION_TARGET_S:.0f} s): generation {generated:.2f} s over {attempts} "
        f"plan attempts, cross-check {checked:.2f} s"
    )
    print(
        f"    floor: one clean world rendered and built per task, no plan, no checks: {floor:.2f} s"
    )
    print(
        f"  cross-check: {len(worlds)}/{len(records)} tasks agree, "
        f"{projections} partner projections"
    )

    world = worlds[len(worlds) // 2]
    size = sum(len(world.files[n]) for n in FILES)
    with tempfile.TemporaryDirectory() as tmp:
        best = raw = float("inf")
        for i in range(20):
            out = Path(tmp) / f"ws{i}"
            t0 = time.perf_counter()
            materialize(world, out)
            best = min(best, time.perf_counter() - t0)
            raw_dir = Path(tmp) / f"raw{i}"
            raw_dir.mkdir()
            t0 = time.perf_counter()
            for name in FILES:
                with open(raw_dir / name, "wb") as fh:
                    fh.write(world.files[name])
            raw = min(raw, time.perf_counter() - t0)
    print(
        f"  materialise one workspace ({size / 1024:.0f} KiB): {best * 1000:.2f} ms "
        f"(target < {MATERIALIZE_TARGET_MS:.0f} ms); floor, four raw writes: {raw * 1000:.2f} ms"
    )
    start = time.perf_counter()
    generate(world.seed, world.tier)
    one = time.perf_counter() - start
    print(f"  one task from its seed, files included: {one * 1000:.0f} ms")


if __name__ == "__main__":
    main()
