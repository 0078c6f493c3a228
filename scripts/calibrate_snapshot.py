"""Save or compare `datagauntlet calibrate --json` for every registered env.

A speed change must not move any reward, component or metric: save the calibration before the
change, compare after it.

    python scripts/calibrate_snapshot.py save DIR      # DIR/<env>.json, one per env
    python scripts/calibrate_snapshot.py compare DIR   # exit 1 and show the first difference

Timing fields (any key with "seconds", "elapsed" or "wall" in its name) are left out of the
comparison; everything else must be byte-identical once re-serialised with sorted keys.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TIMING_WORDS = ("seconds", "elapsed", "wall")


def calibrate(env_id: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "datagauntlet.cli.main", "calibrate", "--env", env_id, "--json"],
        capture_output=True,
        text=True,
        env=os.environ,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"calibrate --env {env_id} failed ({out.returncode}): {out.stderr[-500:]}")
    return out.stdout


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: without_timings(v)
            for k, v in value.items()
            if not any(word in k.lower() for word in TIMING_WORDS)
        }
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def comparable(text: str) -> list[str]:
    return [
        json.dumps(without_timings(json.loads(line)), sort_keys=True)
        for line in text.splitlines()
        if line.strip()
    ]


def env_ids() -> list[str]:
    import datagauntlet as dg

    return list(dg.list_envs())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("save", "compare"))
    parser.add_argument("dir", type=Path)
    parser.add_argument("--env", action="append", help="only this env (repeatable)")
    args = parser.parse_args(argv)
    ids = args.env or env_ids()
    if args.action == "save":
        args.dir.mkdir(parents=True, exist_ok=True)
        for env_id in ids:
            (args.dir / f"{env_id}.json").write_text(calibrate(env_id))
            print(f"saved {env_id}")
        return 0
    differ = 0
    for env_id in ids:
        saved = args.dir / f"{env_id}.json"
        if not saved.is_file():
            print(f"{env_id}: no saved calibration in {args.dir}")
            differ += 1
            continue
        before, after = comparable(saved.read_text()), comparable(calibrate(env_id))
        if before == after:
            print(f"{env_id}: identical ({len(after)} lines)")
            continue
        differ += 1
        for i, (b, a) in enumerate(zip(before, after, strict=False)):
            if b != a:
                print(f"{env_id}: line {i} differs\n  before: {b[:600]}\n  after:  {a[:600]}")
                break
        else:
            print(f"{env_id}: {len(before)} lines before, {len(after)} after")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
