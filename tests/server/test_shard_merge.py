"""`eval --shard I/N` then `merge`: the merged run equals one unsharded run, record for record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "datagauntlet.cli.main"]


def _cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=240, env=os.environ
    )
    if check:
        assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def _rows(run: Path) -> list[dict]:
    rows = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    for r in rows:
        r.pop("seconds", None)
    return sorted(rows, key=lambda r: (r["task_id"], r["rollout"]))


def test_three_shards_merge_to_the_whole_run(tmp_path: Path) -> None:
    base = ["eval", "--env", "dirty-integration", "--agent", "naive", "-n", "7", "-r", "2"]
    _cli(*base, "--out", str(tmp_path / "whole"))
    for i in range(3):
        _cli(*base, "--shard", f"{i}/3", "--out", str(tmp_path / f"s{i}"))
    sizes = [len(_rows(tmp_path / f"s{i}")) for i in range(3)]
    assert sizes == [6, 4, 4]  # tasks 0,3,6 / 1,4 / 2,5, two rollouts each
    shards = [str(tmp_path / f"s{i}") for i in range(3)]
    out = json.loads(_cli("merge", *shards, "--out", str(tmp_path / "merged"), "--json").stdout)
    assert _rows(tmp_path / "merged") == _rows(tmp_path / "whole")
    whole = json.loads((tmp_path / "whole" / "summary.json").read_text())
    assert out["mean_reward"] == whole["mean_reward"] and out["n"] == whole["n"] == 14


def test_overlapping_or_foreign_shards_are_refused(tmp_path: Path) -> None:
    base = ["eval", "--env", "dirty-integration", "--agent", "naive", "-n", "2"]
    _cli(*base, "--shard", "0/2", "--out", str(tmp_path / "a"))
    _cli(*base, "--out", str(tmp_path / "all"))
    _cli(
        "eval",
        "--env",
        "dirty-integration",
        "--agent",
        "careful",
        "-n",
        "2",
        "--shard",
        "1/2",
        "--out",
        str(tmp_path / "other"),
    )
    overlap = _cli(
        "merge",
        str(tmp_path / "a"),
        str(tmp_path / "all"),
        "--out",
        str(tmp_path / "m"),
        check=False,
    )
    assert overlap.returncode == 2 and "must not overlap" in overlap.stderr
    foreign = _cli(
        "merge",
        str(tmp_path / "a"),
        str(tmp_path / "other"),
        "--out",
        str(tmp_path / "m2"),
        check=False,
    )
    assert foreign.returncode == 2 and "another run" in foreign.stderr
    bad = _cli(*base, "--shard", "2/2", "--out", str(tmp_path / "b"), check=False)
    assert bad.returncode == 2 and "0 <= I < N" in bad.stderr and "Traceback" not in bad.stderr
