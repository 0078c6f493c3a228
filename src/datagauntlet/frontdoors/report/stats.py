"""The numbers a report shows: per-run summaries, breakdowns by attribute, per-task differences."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

from datagauntlet.frontdoors.report.runs import Rollout, Run

Z95 = 1.959964


def mean_ci(values: list[float]) -> tuple[float, float | None, float | None]:
    """Mean and a normal 95% interval (None for fewer than two values)."""
    if not values:
        return 0.0, None, None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None, None
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def _numeric_means(dicts: list[dict[str, Any]]) -> dict[str, float]:
    sums: dict[str, list[float]] = defaultdict(list)
    for d in dicts:
        for k, v in d.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                sums[k].append(float(v))
    return {k: round(statistics.fmean(v), 6) for k, v in sorted(sums.items())}


def summarize(run: Run) -> dict[str, Any]:
    if run.kind == "calibrate":
        return {
            "name": run.name,
            "kind": run.kind,
            "env": run.env,
            "model": run.model,
            "n": sum(int(r.get("n", 0)) for r in run.rows),
            "rows": len(run.rows),
            "stamps": run.stamps,
            "config": run.config,
        }
    rewards = [r.reward for r in run.rollouts]
    mean, lo, hi = mean_ci(rewards)
    return {
        "name": run.name,
        "kind": run.kind,
        "env": run.env,
        "model": run.model,
        "config": run.config,
        "stamps": run.stamps,
        "n": len(rewards),
        "tasks": len({r.task_id for r in run.rollouts}),
        "failed": sum(1 for r in run.rollouts if r.status != "ok"),
        "mean_reward": round(mean, 6),
        "ci95": None if lo is None else [round(lo, 6), round(hi or 0.0, 6)],
        "components": _numeric_means([r.components for r in run.rollouts]),
        "metrics": _numeric_means([r.metrics for r in run.rollouts]),
    }


def breakdowns(run: Run) -> dict[str, list[dict[str, Any]]]:
    """Mean reward per value of each attribute the run's tasks carry (family, tier, ...)."""
    groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in run.rollouts:
        for key, value in r.attrs.items():
            groups[key][str(value)].append(r.reward)
    out = {}
    for key, by_value in sorted(groups.items()):
        if len(by_value) < 2 and key in ("split",):
            continue
        out[key] = [
            {"value": v, "n": len(xs), "mean_reward": round(statistics.fmean(xs), 6)}
            for v, xs in sorted(by_value.items())
        ]
    return out


def per_task_means(run: Run) -> dict[str, float]:
    by_task: dict[str, list[float]] = defaultdict(list)
    for r in run.rollouts:
        by_task[r.task_id].append(r.reward)
    return {t: statistics.fmean(v) for t, v in by_task.items()}


def comparisons(runs: list[Run]) -> list[dict[str, Any]]:
    """For each pair of runs of one env (in the order given), the per-task reward difference."""
    out = []
    with_rollouts = [r for r in runs if r.rollouts]
    for i, a in enumerate(with_rollouts):
        for b in with_rollouts[i + 1 :]:
            if a.env != b.env:
                continue
            ma, mb = per_task_means(a), per_task_means(b)
            shared = sorted(set(ma) & set(mb))
            if not shared:
                continue
            rows = [
                {"task_id": t, "a": round(ma[t], 6), "b": round(mb[t], 6),
                 "diff": round(mb[t] - ma[t], 6)}
                for t in shared
            ]  # fmt: skip
            out.append(
                {
                    "a": a.name,
                    "b": b.name,
                    "env": a.env,
                    "tasks": len(shared),
                    "mean_diff": round(statistics.fmean(r["diff"] for r in rows), 6),
                    "b_better": sum(1 for r in rows if r["diff"] > 1e-9),
                    "a_better": sum(1 for r in rows if r["diff"] < -1e-9),
                    "rows": rows,
                }
            )
    return out


def reward_lost(rollout: Rollout, weights: dict[str, float]) -> list[dict[str, Any]]:
    """Where the reward went: each component's weight times what it fell short of 1."""
    lost = [
        {"component": k, "value": v, "weight": weights.get(k, 0.0),
         "lost": round(weights.get(k, 0.0) * (1.0 - v), 6)}
        for k, v in rollout.components.items()
    ]  # fmt: skip
    return sorted(lost, key=lambda d: -d["lost"])
