"""Sandbox speed: the `print(1)` round trip with every wall up, and what each wall adds.

Target (issue 11): a median round trip under 60 ms with every wall up. Each figure is printed
next to its floors measured in the same run: a bare `python -I -S -c print(1)` started the
same way (the interpreter's own start-up), and the sandbox with no wall raised (launcher and
supervisor). A wall's cost is shown twice, in the child's CPU time (which a busy machine
disturbs far less than wall time): alone minus no wall, and every wall minus every wall but
that one (its cost where it is used).
Run: `python benchmarks/bench_sandbox.py [RUNS]` (as root, for the uid drop and netns).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from benchlib import Report

from datagauntlet.kits.sandbox import WALLS, Limits, fresh_workspace, run_script
from datagauntlet.kits.sandbox.runtime import runtime

LIMITS = Limits(timeout_s=30.0, cpu_s=10)
TARGET_MS = 60.0


def median_ms(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main(runs: int) -> None:
    rt = runtime()
    bare_argv = [str(rt.python), "-I", "-S", "-B", "-c", "print(1)"]
    with fresh_workspace() as ws:
        run_script("print(1)", ws, LIMITS)  # warm the page cache and the runtime

        cpu: dict[tuple[str, ...], list[float]] = {}
        both: dict[tuple[str, ...], list[float]] = {}

        def sandboxed(walls: tuple[str, ...]):  # type: ignore[no-untyped-def]
            def go() -> None:
                before = time.process_time()
                res = run_script("print(1)", ws, LIMITS, walls=walls)
                parent = time.process_time() - before
                assert res.stdout == "1\n" and res.walls == walls, (res.stderr, res.walls)
                cpu.setdefault(walls, []).append(res.cpu_s * 1000)
                both.setdefault(walls, []).append((res.cpu_s + parent) * 1000)

            return go

        # interleave the configurations so a burst of load elsewhere hits them all alike
        names = ["bare python", "no walls", *WALLS, *(f"-{w}" for w in WALLS), "every wall"]
        fns = {
            "bare python": lambda: subprocess.run(bare_argv, stdout=subprocess.DEVNULL, check=True),
            "no walls": sandboxed(()),
            **{w: sandboxed((w,)) for w in WALLS},
            **{f"-{w}": sandboxed(tuple(x for x in WALLS if x != w)) for w in WALLS},
            "every wall": sandboxed(WALLS),
        }
        samples: dict[str, list[float]] = {n: [] for n in names}
        for _ in range(runs):
            for name in names:
                samples[name].append(median_ms(fns[name], 1))
    med = {n: statistics.median(v) for n, v in samples.items()}
    # a wall's cost in the child's CPU time, which other people's load disturbs far less
    child = {w: statistics.median(v) for w, v in cpu.items()}
    floor = med["no walls"]
    report = Report(f"sandbox: print(1) round trip, median of {runs}")
    report.add("bare python -I -S (interpreter start-up)", med["bare python"], "ms")
    report.add("sandbox, no wall (launcher + supervisor)", floor, "ms")
    none = child[()]
    for wall in WALLS:
        cost = child[(wall,)] - none
        report.add(f"{wall} alone (child CPU {cost:+.1f} ms)", med[wall], "ms", floor, "no wall")
    full = med["every wall"]
    for wall in WALLS:
        cost = child[WALLS] - child[tuple(x for x in WALLS if x != wall)]
        report.add(f"every wall but {wall} ({wall}: child CPU {cost:+.1f} ms)", med[f"-{wall}"],
                   "ms", floor, "no wall")  # fmt: skip
    report.add("every wall", full, "ms", floor, "no wall")
    report.add("every wall, fastest run (an idle moment)", min(samples["every wall"]), "ms",
               min(samples["no walls"]), "no wall, fastest")  # fmt: skip
    report.add("child CPU, no wall / every wall", f"{none:.1f} / {child[WALLS]:.1f}", "ms")
    total = statistics.median(both[WALLS])
    report.add("CPU of one round trip with every wall (parent + child)", total, "ms")
    report.note("on a busy machine the round trip waits for a core; the CPU figures do not")
    verdict = "met" if full < TARGET_MS else "MISSED"
    report.note(f"target: every wall under {TARGET_MS:.0f} ms ({verdict})")
    report.show()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
