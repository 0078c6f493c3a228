"""`datagauntlet check`: run the named conformance checks (`check_env`) on registered envs."""

from __future__ import annotations

import argparse
import json

from datagauntlet.cli.options import count

NAME = "check"
HELP = "Run check_env's named conformance checks on every env (or --env ID) and report each."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", action="append", metavar="ID", help="only this env (repeatable)")
    parser.add_argument(
        "--tasks", type=count(), default=3, metavar="N", help="eval tasks per check"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per env on stdout")
    parser.add_argument("config", nargs="*", metavar="KEY=VALUE", help="config for one --env")


def run(args: argparse.Namespace) -> int:
    from datagauntlet.cli.options import build_env
    from datagauntlet.core.conformance import check_env
    from datagauntlet.core.registry import list_envs, make

    if args.tasks < 1:
        raise ValueError("--tasks must be >= 1")
    env_ids = args.env or list_envs()
    if args.config and len(env_ids) != 1:
        raise ValueError("KEY=VALUE config needs exactly one --env")
    failed = False
    for env_id in env_ids:
        env = build_env(env_id, args.config) if args.config else make(env_id)
        report = check_env(env, args.tasks, raise_on_failure=False)
        failed |= not report.passed
        print(json.dumps(report.as_dict(), sort_keys=True) if args.json else report)
    return 1 if failed else 0
