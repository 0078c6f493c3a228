"""event-recon world speed: generating, invariant-checking and cross-checking the 120 public
tasks on one core, and materialising one workspace. Each figure is printed next to its floor
measured in the same run. Not a test. Run: .venv/bin/python benchmarks/bench_event_recon_world.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from datagauntlet.envs.event_recon.splits import public_tasks
from datagauntlet.envs.event_recon.world import zones
from datagauntlet.envs.event_recon.world.base_world import base_draft
from datagauntlet.envs.event_recon.world.generator import cross_check, generate
from datagauntlet.envs.event_recon.world.plan import run
from datagauntlet.envs.event_recon.world.records import FILES
from datagauntlet.envs.event_recon.world.workspace import materialize

PER_WORLD_TARGET_S = 0.5  # issue 24: worlds at the original's size, still cheap to build
GENERATION_TARGET_S = 120 * PER_WORLD_TARGET_S
MATERIALIZE_TARGET_MS = 100.0


def one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned (no sched_setaffinity)"


def main() -> None:
    sys.path.append(str(Path(__file__).resolve().parent))
    from benchlib import Report

    report = Report(f"event-recon world ({one_core()}; zones from {zones.source()})")
    records = public_tasks()

    start = time.perf_counter()
    for r in records:
        run(base_draft(r.seed, r.tier))
    floor = time.perf_counter() - start

    start = time.perf_counter()
    cpu = time.process_time()
    worlds = []
    per_world: dict[int, list[float]] = {}
    for r in records:
        t0 = time.perf_counter()
        worlds.append(generate(r.seed, r.tier))
        per_world.setdefault(r.tier, []).append(time.perf_counter() - t0)
    generated = time.perf_counter() - start
    cpu = time.process_time() - cpu  # a shared machine stretches wall time, not CPU time
    start = time.perf_counter()
    projections = sum(cross_check(w) for w in worlds)
    checked = time.perf_counter() - start
    total = generated + checked
    attempts = sum(w.attempts for w in worlds)
    report.add(
        f"120 public tasks: generation + ten conditions + cross-check "
        f"(target < {GENERATION_TARGET_S:.0f} s)",
        total, "s", floor, "clean worlds, no plan, no checks",
    )  # fmt: skip
    report.add(f"  generation ({attempts} plan attempts)", generated, "s")
    every = [x for v in per_world.values() for x in v]
    report.add(
        f"generation per world, mean (target < {PER_WORLD_TARGET_S} s)",
        generated / len(records), "s", floor / len(records), "a clean world",
    )  # fmt: skip
    report.add("  CPU time per world, mean", cpu / len(records), "s")
    for tier, times in sorted(per_world.items()):
        report.add(f"  tier {tier}, mean of {len(times)}", sum(times) / len(times), "s")
    report.add("  slowest world", max(every), "s")
    size_t4 = max(len(w.files["webhooks.jsonl"]) for w in worlds if w.tier == 4)
    report.add("largest tier-4 webhooks.jsonl (read_file page 120,000)", size_t4, "bytes")
    report.add("  cross-check", checked, "s")
    report.add(f"cross-check: tasks agreeing of {len(records)}", len(worlds))
    report.add("cross-check: partner projections", projections)

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
    report.add(
        f"materialise one workspace, {size / 1024:.0f} KiB (target < "
        f"{MATERIALIZE_TARGET_MS:.0f} ms)",
        best * 1000, "ms", raw * 1000, "four raw writes",
    )  # fmt: skip
    start = time.perf_counter()
    generate(world.seed, world.tier)
    report.add("one task from its seed, files included", (time.perf_counter() - start) * 1000, "ms")
    report.show()


if __name__ == "__main__":
    main()
