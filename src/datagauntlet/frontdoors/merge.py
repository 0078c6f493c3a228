"""Join the outputs of `eval --shard I/N` runs into one run, as if it had run in one piece."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from datagauntlet.core.output_files import check_output, input_files, write_output
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
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a directory")
    inputs = input_files(shards, (RESULTS_FILE,))
    for name in (RESULTS_FILE, SUMMARY_FILE):  # both refused before any shard is read
        check_output(out / name, inputs, overwrite, "--overwrite")
    merged: dict[tuple[str, int], dict[str, Any]] = {}
    owner: dict[tuple[str, int], Path] = {}
    identity: dict[str, Any] | None = None
    names: set[str] | None = None
    for shard in shards:
        path = shard / RESULTS_FILE
        if not path.exists():
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
            if names is None:
                names = set(record["components"])
            elif set(record["components"]) != names:
                raise ValueError(f"{shard}: task {key[0]} has other score components than the rest")
            merged[key], owner[key] = record, shard
    records = sorted(merged.values(), key=rollout_key)
    rollouts = 1 + max(int(r["rollout"]) for r in records)
    lines = "".join(json.dumps(record, default=str) + "\n" for record in records)
    write_output(out / RESULTS_FILE, lines, inputs, overwrite, "--overwrite")
    summary = summarize_records(records, rollouts)
    summary["shards"] = [str(s) for s in shards]
    text = json.dumps(summary, indent=2, sort_keys=True) + "\n"
    write_output(out / SUMMARY_FILE, text, inputs, True)  # results just written are its own
    return summary
