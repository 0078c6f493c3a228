"""How far the workspace-only attack gets, one widening at a time, over the public split.

`python -m datagauntlet.envs.event_recon.attacks.sweep [--workers W]` prints the table in
docs/envs/event-recon.md; the full-sweep test recomputes it under `make gates`.
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

from datagauntlet.envs.event_recon.attacks.attackers import SCALED, STRONGEST, workspace_only

# Each row adds one repair to the one above it; `STRONGEST` ends the rows inside the attack's
# definition and `SCALED` the ones beyond it.
ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the five bookkeeping repairs", ()),
    ("+ a refund with no amount reverses what its order booked", ("refund_all",)),
    ("+ a held-back refund of the whole gross does too", ("refund_all", "refund_full")),
    ("+ drop orders under the database's bar (`workspace_only`)", STRONGEST),
    ("+ scale a held-back refund's share of the accrual (beyond)", (*STRONGEST, "refund_share")),
    ("+ scale a stale cached tier by the rates (`workspace_only_scaled`)", SCALED),
    ("+ rebook ratio outliers among a code's orders (beyond)", (*SCALED, "sibling_ratio")),
)


@dataclass(frozen=True)
class Line:
    label: str
    solved: int
    tasks: int
    ledger_mean: float
    by_tier: dict[int, float]
    reward_mean: float


def _play(job: tuple[int, tuple[tuple[str, ...], ...]]) -> list[tuple[int, int, float, float]]:
    from datagauntlet.core.registry import make

    index, widenings = job
    env: Any = make("event-recon")  # the registry's instance: event-recon's own methods
    task = env.tasks("public")[index]
    tier = env.tier_of(task)
    out = []
    for row, widen in enumerate(widenings):
        ep = env.episode(task)
        try:
            workspace_only(ep, widen)
            score = ep.score()
        finally:
            ep.close()
        ledger = score.components["ledger_correctness"]["value"]
        out.append((row, tier, score.reward, ledger))
    return out


def attack_table(workers: int = 1) -> list[Line]:
    from datagauntlet.core.registry import make

    count = len(make("event-recon").tasks("public"))
    widenings = tuple(w for _, w in ROWS)
    jobs = [(i, widenings) for i in range(count)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = [r for rs in pool.map(_play, jobs) for r in rs]
    else:
        results = [r for job in jobs for r in _play(job)]
    rows: dict[int, list[tuple[int, float, float]]] = defaultdict(list)
    for row, tier, reward, ledger in results:
        rows[row].append((tier, reward, ledger))
    out = []
    for row, (label, _) in enumerate(ROWS):
        got = rows[row]
        tiers: dict[int, list[float]] = defaultdict(list)
        for tier, _, ledger in got:
            tiers[tier].append(ledger)
        out.append(
            Line(
                label,
                sum(1 for _, r, _ in got if r >= 1.0),
                len(got),
                round(statistics.fmean(x for _, _, x in got), 4),
                {t: round(statistics.fmean(v), 4) for t, v in sorted(tiers.items())},
                round(statistics.fmean(r for _, r, _ in got), 4),
            )
        )
    return out


def markdown(lines: Sequence[Line]) -> str:
    tiers = sorted(lines[0].by_tier)
    head = "| repairs | solved | reward mean | ledger mean | " + " | ".join(f"T{t}" for t in tiers)
    out = [head + " |", "|---" * (4 + len(tiers)) + "|"]
    for line in lines:
        cells = " | ".join(f"{line.by_tier[t]:.4f}" for t in tiers)
        out.append(
            f"| {line.label} | {line.solved}/{line.tasks} | {line.reward_mean:.4f} "
            f"| {line.ledger_mean:.4f} | {cells} |"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    args = parser.parse_args(argv)
    if args.workers < 1:
        print("error: --workers must be >= 1", file=sys.stderr)
        return 2
    print(markdown(attack_table(args.workers)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
