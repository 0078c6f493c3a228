"""`datagauntlet calibrate`: play every policy of every env and print the calibration tables."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from datagauntlet.cli.options import count

NAME = "calibrate"
HELP = (
    "Play every built-in policy over eval tasks and print mean rewards per config "
    "(the tables of docs/calibration.md). Needs no model and no key."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from datagauntlet.cli.options import add_split_argument

    parser.add_argument("--env", action="append", metavar="ID", help="only this env (repeatable)")
    parser.add_argument(
        "--seeds",
        type=count(),
        default=None,
        metavar="N",
        help="tasks per cell (default: the env's own)",
    )
    add_split_argument(parser)
    parser.add_argument(
        "--workers", type=count(1, 256), default=1, metavar="K", help="worker processes"
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="spread episodes as Ray tasks (extra `ray`): a local instance, or the cluster at "
        "ADDRESS; results are identical to a local run",
    )
    parser.add_argument(
        "--policy", action="append", metavar="NAME", help="only this policy (repeatable)"
    )
    parser.add_argument(
        "config",
        nargs="*",
        metavar="KEY=VALUE",
        help="config for the one --env given, e.g. cases=eval_curated.jsonl",
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="also write an offline HTML report of the calibration (see `datagauntlet report`)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing --report file")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="one JSON object per env on stdout")
    out.add_argument("--markdown", action="store_true", help="markdown, as in docs/calibration.md")


def run(args: argparse.Namespace) -> int:
    from datagauntlet.cli.options import table_console
    from datagauntlet.core.registry import list_envs

    if args.seeds is not None and args.seeds < 1:
        raise ValueError("--seeds must be >= 1")
    env_ids = args.env or list_envs()
    if args.config and len(env_ids) != 1:
        raise ValueError("KEY=VALUE config needs exactly one --env")
    if args.report:
        from datagauntlet.core.output_files import check_output

        check_output(args.report, force=args.force)  # before minutes of work, not after them
    console = table_console(stderr=args.json or args.markdown)
    blocks = []
    mapper = _mapper(args)
    try:
        _calibrate_envs(args, env_ids, console, blocks, mapper)
    finally:
        if mapper is not None:
            mapper.close()
    if args.report:
        from datagauntlet.frontdoors.report.html import write_report
        from datagauntlet.frontdoors.report.runs import runs_from_calibration

        write_report(
            runs_from_calibration(blocks, "calibration"), Path(args.report), force=args.force
        )
        print(f"report: {args.report} (open it in a browser)", file=sys.stderr)
    return 0


def _mapper(args: argparse.Namespace) -> Any:
    """One pool for the whole run: Ray tasks, or this machine's worker processes."""
    if args.ray is not None:
        from datagauntlet.frontdoors.ray_mapper import RayMapper

        return RayMapper(args.ray or None)
    if args.workers > 1:
        from datagauntlet.core.runner import ProcessMapper

        return ProcessMapper(args.workers)
    return None


def _calibrate_envs(
    args: argparse.Namespace, env_ids: list[str], console: Any, blocks: list, mapper: Any
) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from datagauntlet.core.report import markdown_table
    from datagauntlet.core.runner import calibration_size, start_calibration

    planned = _plan(args, env_ids)
    # With a pool, every env's jobs are queued before the first env's results are read, so the
    # workers go from one env to the next without waiting for this process between them.
    pending = [
        start_calibration(env, args.seeds, args.split, args.workers, args.policy, mapper, grid)
        if mapper is not None
        else None
        for _, env, grid, _ in planned
    ]
    for (env_id, env, grid, narrowed), started in zip(planned, pending, strict=True):
        for key, (kept, full) in narrowed.items():
            value = env.config.as_dict()[key]
            print(
                f"calibrate: {key}={value} narrows the {key} sweep to {kept} of {full} cells",
                file=sys.stderr,
            )
        total = calibration_size(env, args.seeds, args.policy, args.split, grid)
        with Progress(
            TextColumn(f"[bold]{env_id}[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
            disable=total < 50,
        ) as bar:
            job = bar.add_task(env_id, total=total)
            calibration = started or start_calibration(
                env, args.seeds, args.split, args.workers, args.policy, None, grid
            )
            rows = calibration.rows(lambda k, job=job: bar.advance(job, k))
        blocks.append(
            {"env": env_id, "versions": env.versions(), "rows": [r.as_dict() for r in rows]}
        )
        if args.json:
            print(json.dumps(blocks[-1], sort_keys=True))
            continue
        if args.markdown:
            print(f"### {env_id}\n\n{markdown_table(rows)}\n")
            continue
        _print_table(console, env_id, env, rows, narrowed, args.split)


def _plan(args: argparse.Namespace, env_ids: list[str]) -> list[tuple[str, Any, Any, Any]]:
    """(env id, env, config grid, the sweeps the given config narrows) for every env, every
    --policy checked before anything plays."""
    from datagauntlet.cli.options import build_env, parse_pairs
    from datagauntlet.core.registry import make
    from datagauntlet.core.runner import narrowed_grid

    planned = []
    for env_id in env_ids:
        env = build_env(env_id, args.config) if args.config else make(env_id)
        if args.policy:
            unknown = [p for p in args.policy if p not in env.policies()]
            if unknown:
                raise ValueError(
                    f"{env_id} has no policy {unknown[0]!r}; choose from {sorted(env.policies())}"
                )
        grid, narrowed = narrowed_grid(env, parse_pairs(args.config or []))
        planned.append((env_id, env, grid, narrowed))
    return planned


def _print_table(
    console: Any, env_id: str, env: Any, rows: list[Any], narrowed: dict[str, Any], split: str
) -> None:
    from rich.table import Table

    from datagauntlet.core.report import config_label

    table = Table(
        title=f"{env_id}: mean reward ({split}, n={rows[0].n} per cell)",
        caption="* reference policy: must score 1.000 on every task"
        + "".join(f"; {k} held at {env.config.as_dict()[k]}" for k in narrowed),
    )
    table.add_column("config", no_wrap=True)
    table.add_column("policy", no_wrap=True)
    table.add_column("mean", justify="right")
    table.add_column("min", justify="right")
    for name in env.weights:
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(
            config_label(r.config),
            r.policy
            + ("*" if r.policy == env.reference else "")
            + (" (attack)" if r.policy in env.attackers else ""),
            f"{r.mean_reward:.3f}",
            f"{r.min_reward:.3f}",
            *(f"{r.components[k]:.3f}" for k in env.weights),
        )
    console.print(table)
