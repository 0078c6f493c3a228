"""`datagauntlet rescore`: replay a saved run's tool calls on today's code and list changes."""

from __future__ import annotations

import argparse
import json

NAME = "rescore"
HELP = (
    "Replay every saved rollout's tool calls against the current code, score it again, and "
    "list each rollout whose score changed (with both version stamps)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN", help="an eval output directory or a traces.jsonl")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--fail-on-change", action="store_true", help="exit 1 when any score changed"
    )
    parser.add_argument(
        "--trust-run-config",
        action="store_true",
        help="build the run's env with every config key it saved, family_module and file "
        "paths included (default: only the keys the env declares safe for remote clients)",
    )


def run(args: argparse.Namespace) -> int:
    from datagauntlet.frontdoors.report.rescore import rescore
    from datagauntlet.frontdoors.report.runs import load_run

    result = rescore(load_run(args.run), trust_config=args.trust_run_config)
    changed = result.changed
    if args.json:
        print(
            json.dumps(
                {
                    "run": result.run,
                    "env": result.env,
                    "rollouts": len(result.rollouts),
                    "changed": [r.as_dict() for r in changed],
                    "diverged": sum(r.diverged for r in result.rollouts),
                    "saved_versions": result.saved_versions,
                    "current_versions": result.current_versions,
                }
            )
        )
    else:
        print(
            f"{result.run} ({result.env}): {len(result.rollouts)} rollouts re-scored, "
            f"{len(changed)} changed"
        )
        print(f"  saved versions:   {json.dumps(result.saved_versions, sort_keys=True)}")
        print(f"  current versions: {json.dumps(result.current_versions, sort_keys=True)}")
        for r in changed:
            note = " (tool results diverged)" if r.diverged else ""
            print(
                f"  #{r.index} {r.task_id} rollout {r.rollout}: "
                f"{r.saved:.6f} -> {r.now:.6f} ({r.now - r.saved:+.6f}){note}"
            )
    return 1 if args.fail_on_change and changed else 0
