"""Summaries of eval records: mean reward, components and metrics, with a 95% interval when
sampled, and failures grouped by kind."""

from __future__ import annotations

import hashlib
import math
import statistics
from typing import Any

Z95 = 1.959964
FIRST_MESSAGE_CHARS = 300


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
        "metrics": metric_means(records),
        "mean_turns": round(statistics.fmean(r["turns"] for r in records), 3),
        "stops": _counts(r["stop"] for r in records),
        "total_tokens": sum(int(r["usage"]["total_tokens"]) for r in records),
        **versions_of(records),
    }
    failures = failures_by_kind(records)
    if failures:
        out["failures"] = failures
    if rollouts > 1 and len(rewards) > 1:
        half = Z95 * statistics.stdev(rewards) / math.sqrt(len(rewards))
        out["ci95"] = [round(out["mean_reward"] - half, 6), round(out["mean_reward"] + half, 6)]
    return out


def versions_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The code's versions (those of the first rollout: a resumed run refuses others) and one
    digest of the task hashes, in rollout order, as `calibrate --json` gives them."""
    stamps = [r.get("versions") or {} for r in records]
    versions = {k: v for k, v in stamps[0].items() if k != "task_hash"}
    ordered = sorted(
        zip(records, stamps, strict=True), key=lambda rs: (rs[0]["task_id"], rs[0]["rollout"])
    )
    hashes = "\n".join(str(stamp.get("task_hash", "")) for _, stamp in ordered)
    return {"versions": versions, "tasks_hash": hashlib.sha256(hashes.encode()).hexdigest()[:32]}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def metric_means(records: list[dict[str, Any]]) -> dict[str, float]:
    """The mean of every numeric metric, over the records that report it."""
    values: dict[str, list[float]] = {}
    for r in records:
        for k, v in (r.get("metrics") or {}).items():
            if _is_number(v):
                values.setdefault(k, []).append(float(v))
    return {k: round(statistics.fmean(vs), 6) for k, vs in sorted(values.items())}


def failures_by_kind(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{kind: {"count", "first"}} over failed records, most frequent kind first."""
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.get("status") == "ok":
            continue
        kind = str(r.get("error_kind") or "error")
        group = out.setdefault(kind, {"count": 0, "first": str(r.get("error") or "")})
        group["count"] += 1
    for group in out.values():
        first = group["first"].strip().splitlines()
        text = first[-1] if first else ""
        group["first"] = text[:FIRST_MESSAGE_CHARS]
    return dict(sorted(out.items(), key=lambda kv: (-kv[1]["count"], kv[0])))


def _counts(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))
