"""`datagauntlet show`: print one saved rollout's trajectory in the terminal."""

from __future__ import annotations

import argparse

from datagauntlet.cli.options import count

NAME = "show"
HELP = "Print one rollout of a saved run (eval output or vf-eval traces.jsonl) in the terminal."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN", help="an eval output directory or a traces.jsonl")
    parser.add_argument(
        "--rollout", type=count(0), default=0, metavar="N", help="position in the run (default 0)"
    )
    parser.add_argument("--full", action="store_true", help="do not fold long messages")


def run(args: argparse.Namespace) -> int:
    from datagauntlet.frontdoors.report.runs import load_run
    from datagauntlet.frontdoors.report.terminal import show

    show(load_run(args.run), args.rollout, full=args.full)
    return 0
