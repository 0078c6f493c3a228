"""Summaries of eval records: mean reward and components, with a 95% interval when sampled."""

from __future__ import annotations

import math
import statistics
from typing import Any

Z95 = 1.959964


def summarize_records(records: list[dict[str, Any]], rollouts: int) -> dict[str, Any]:
    """Failed rollouts count as reward 0: they are reported, never dropped."""
    if not records:
        return {"n": 0}
    rewards = [float(r["reward"]) for r in records]
    names = list(records[0]["components"])
    out: dict[str, Any] = {
        "env": records[0]["env"],
        "config": records[0]["config"],
        "model": records[0]["model"],
        "n": len(records),
        "tasks": len({r["task_id"] for r in records}),
        "failed": sum(1 for r in records if r["status"] != "ok"),
        "mean_reward": round(statistics.fmean(rewards), 6),
        "components": {
            k: round(statistics.fmean(float(r["components"][k]) for r in records), 6) for k in names
        },
        "mean_turns": round(statistics.fmean(r["turns"] for r in records), 3),
        "stops": _counts(r["stop"] for r in records),
        "total_tokens": sum(int(r["usage"]["total_tokens"]) for r in records),
    }
    if rollouts > 1 and len(rewards) > 1:
        half = Z95 * statistics.stdev(rewards) / math.sqrt(len(rewards))
        out["ci95"] = [round(out["mean_reward"] - half, 6), round(out["mean_reward"] + half, 6)]
    return out


def _counts(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))
