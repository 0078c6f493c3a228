"""Join the outputs of `eval --shard I/N` runs into one run, as if it had run in one piece."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from datagauntlet.frontdoors.evaluate import (
    RESULTS_FILE,
    SUMMARY_FILE,
    latest_by_key,
    load_records,
    rollout_key,
)
from datagauntlet.frontdoors.summary import summarize_records

RUN_FIELDS = ("env", "config", "model", "split")


def merge_runs(shards: list[Path], out: Path, overwrite: bool = False) -> dict[str, Any]:
    if not shards:
        raise ValueError("merge needs at least one shard directory")
    if (out / RESULTS_FILE).exists() and not overwrite:
        raise ValueError(f"{out} already holds results; pass --overwrite to replace them")
    merged: dict[tuple[str, int], dict[str, Any]] = {}
    owner: dict[tuple[str, int], Path] = {}
    identity: dict[str, Any] | None = None
    for shard in shards:
        path = shard / RESULTS_FILE
        if not path.is_file():
            raise ValueError(f"{shard}: no {RESULTS_FILE} (expected an `eval --shard` output)")
        latest = latest_by_key(load_records(path))
        if not latest:
            raise ValueError(f"{path}: holds no rollouts")
        for key, record in latest.items():
            got = {k: record.get(k) for k in RUN_FIELDS}
            if identity is None:
                identity = got
            elif got != identity:
                raise ValueError(
                    f"{shard} holds another run ({got['env']}, {got['model']}, {got['config']}) "
                    f"than the first shard ({identity['env']}, {identity['model']})"
                )
            if key in merged:
                raise ValueError(
                    f"task {key[0]} rollout {key[1]} is in both {owner[key]} and {shard}: "
                    "shards must not overlap"
                )
            merged[key], owner[key] = record, shard
    records = sorted(merged.values(), key=rollout_key)
    rollouts = 1 + max(int(r["rollout"]) for r in records)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{RESULTS_FILE}.tmp"
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, default=str) + "\n")
    tmp.replace(out / RESULTS_FILE)
    summary = summarize_records(records, rollouts)
    summary["shards"] = [str(s) for s in shards]
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary
