"""`datagauntlet merge`: one run from the outputs of `eval --shard I/N` runs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NAME = "merge"
HELP = (
    "Join `datagauntlet eval --shard I/N` outputs (from one machine or many) into one run "
    "directory with one results.jsonl and summary.json."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shards", nargs="+", metavar="SHARD_DIR", help="eval output directories")
    parser.add_argument("--out", required=True, metavar="DIR", help="the merged run directory")
    parser.add_argument(
        "--overwrite", "--force", action="store_true", help="replace results in --out"
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args: argparse.Namespace) -> int:
    from datagauntlet.frontdoors.merge import merge_runs

    summary = merge_runs([Path(s) for s in args.shards], Path(args.out), args.overwrite)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        print(
            f"merged {len(args.shards)} shards into {args.out}: {summary['n']} rollouts of "
            f"{summary['tasks']} tasks, mean reward {summary['mean_reward']:.4f}, "
            f"{summary['failed']} failed"
        )
    return 0
