"""`datagauntlet gates`: run each env's gates and exit non-zero when one fails."""

from __future__ import annotations

import argparse
import json
import sys

from datagauntlet.cli.options import count

NAME = "gates"
HELP = (
    "Run the gates that make an env's rewards trustworthy: reference 1.0 on every task, null 0, "
    "probes under their ceilings, the floor gap, determinism across processes, re-scoring "
    "stability, a leak scan and version stamps. Exits 1 when a gate fails."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from datagauntlet.cli.options import add_split_argument

    parser.add_argument("env", nargs="?", metavar="ENV", help="one env id (default: every env)")
    add_split_argument(parser)
    parser.add_argument(
        "-n", type=count(), default=None, metavar="N", help="tasks (default: the env's own count)"
    )
    parser.add_argument(
        "--workers", type=count(1, 256), default=1, metavar="K", help="worker processes"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per env on stdout")
    parser.add_argument(
        "config", nargs="*", metavar="KEY=VALUE", help="config for the one ENV given"
    )


def run(args: argparse.Namespace) -> int:
    from rich.table import Table

    from datagauntlet.cli.options import build_env, table_console
    from datagauntlet.core.gates import run_gates
    from datagauntlet.core.registry import list_envs, make

    if args.n is not None and args.n < 1:
        raise ValueError("-n must be >= 1")
    if args.workers < 1:
        raise ValueError("--workers must be >= 1")
    env_ids = [args.env] if args.env else list_envs()
    if args.config and not args.env:
        raise ValueError("KEY=VALUE config needs one ENV")
    envs = [build_env(e, args.config) if args.config else make(e) for e in env_ids]
    for env in envs:
        env.tasks(args.split, 1)  # a bad split fails before any gate runs
    console = table_console(stderr=args.json)
    ok = True
    for env in envs:
        with console.status(f"gating {env.id} on {args.split}..."):
            report = run_gates(env, args.split, args.n, args.workers)
        ok &= report.ok
        if args.json:
            print(json.dumps(report.as_dict()), flush=True)
            continue
        table = Table(title=f"{env.id}: {args.split}, {report.tasks} tasks")
        for column in ("gate", "value", "bound", "ok"):
            table.add_column(column, justify="right" if column == "value" else "left")
        for gate in report.gates:
            mark = "[green]pass[/]" if gate.ok else "[red]FAIL[/]"
            table.add_row(gate.name, str(gate.value), gate.bound, mark)
        console.print(table)
    if not ok:
        print("datagauntlet gates: a gate failed", file=sys.stderr)
    return 0 if ok else 1
