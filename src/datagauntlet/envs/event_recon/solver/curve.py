"""The measured difficulty curve: mean reward of the k-of-14-rules policies, by tier.

`python -m datagauntlet.envs.event_recon.solver.curve [--every N] [--workers W]` prints the
table as Markdown (the one in docs/envs/event-recon.md); `tests/event_recon/
test_er_solver_curve.py` recomputes it and compares.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from datagauntlet.envs.event_recon.solver.policy import GRADED_KS, graded

CURVE_EVERY = 4  # the published table plays every 4th public task: 30 tasks, 7-8 per tier


@dataclass(frozen=True)
class Cell:
    k: int
    tier: int
    mean_reward: float
    mean_ledger: float
    solved: int
    tasks: int


def _play_task(job: tuple[int, tuple[int, ...]]) -> list[tuple[int, int, float, float]]:
    """Every graded policy on one task (task-major, so its world is generated once)."""
    from datagauntlet.core.registry import make

    index, ks = job
    env: Any = make("event-recon")  # the registry's instance: event-recon's own methods
    task = env.tasks("public")[index]
    tier = env.tier_of(task)
    out = []
    for k in ks:
        ep = env.episode(task)
        try:
            graded(k)(ep)
            score = ep.score()
        finally:
            ep.close()
        out.append((k, tier, score.reward, score.components["ledger_correctness"]["value"]))
    return out


def curve(
    every: int = CURVE_EVERY,
    ks: Sequence[int] = GRADED_KS,
    workers: int = 1,
    tiers: Sequence[int] | None = None,
) -> list[Cell]:
    """The table's cells; `tiers` keeps only those tiers' tasks (a cheaper partial check)."""
    from datagauntlet.core.registry import make

    env: Any = make("event-recon")  # the registry's instance: event-recon's own methods
    tasks = env.tasks("public")
    picked = [
        i for i in range(0, len(tasks), every) if tiers is None or env.tier_of(tasks[i]) in tiers
    ]
    jobs = [(i, tuple(ks)) for i in picked]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = [r for rs in pool.map(_play_task, jobs) for r in rs]
    else:
        results = [r for job in jobs for r in _play_task(job)]
    cells: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for k, tier, reward, ledger in results:
        cells[(k, tier)].append((reward, ledger))
    return [
        Cell(
            k,
            tier,
            round(statistics.fmean(r for r, _ in v), 3),
            round(statistics.fmean(x for _, x in v), 3),
            sum(1 for r, _ in v if r >= 1.0),
            len(v),
        )
        for (k, tier), v in sorted(cells.items())
    ]


def markdown(cells: Sequence[Cell]) -> str:
    tiers = sorted({c.tier for c in cells})
    by = {(c.k, c.tier): c for c in cells}
    head = "| rules known (k of 14) | " + " | ".join(f"T{t}" for t in tiers) + " | solved |"
    lines = [head, "|---" * (len(tiers) + 2) + "|"]
    for k in sorted({c.k for c in cells}):
        row = [by[(k, t)] for t in tiers]
        solved = sum(c.solved for c in row)
        total = sum(c.tasks for c in row)
        cells_text = " | ".join(f"{c.mean_reward:.3f}" for c in row)
        lines.append(f"| {k} | {cells_text} | {solved}/{total} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=CURVE_EVERY, help="play every Nth task")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    args = parser.parse_args(argv)
    if args.every < 1 or args.workers < 1:
        print("error: --every and --workers must be >= 1", file=sys.stderr)
        return 2
    print(markdown(curve(args.every, workers=args.workers)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
