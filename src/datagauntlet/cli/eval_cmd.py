"""`datagauntlet eval`: play tasks through the agent loop with a model endpoint or a policy."""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from datagauntlet.cli.options import add_config_argument, count, number, seconds, table_console
from datagauntlet.frontdoors.event_loop import LOOPS
from datagauntlet.frontdoors.event_loop import run as run_on_loop

NAME = "eval"
HELP = (
    "Evaluate a model on an environment through any OpenAI-compatible endpoint "
    "(or a built-in policy with --agent): one JSONL line per rollout, then a summary."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _add_target(parser)
    _add_workload(parser)
    _add_output(parser)
    _add_transport(parser)
    _add_modes(parser)


def _add_target(parser: argparse.ArgumentParser) -> None:
    """The env and the endpoint it is played against."""
    parser.add_argument("--env", required=True, metavar="ID", help="environment id")
    add_config_argument(parser)
    parser.add_argument("--model", metavar="NAME", help="model name sent to the endpoint")
    parser.add_argument("--base-url", metavar="URL", help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default OPENAI_API_KEY)",
    )


def _add_workload(parser: argparse.ArgumentParser) -> None:
    """How many rollouts, how many at once, the turns each may take, the temperature."""
    parser.add_argument(
        "-n", "--tasks", type=count(), default=5, metavar="N", help="tasks (default 5)"
    )
    parser.add_argument(
        "-r", "--rollouts", type=count(), default=1, metavar="R", help="rollouts per task"
    )
    parser.add_argument(
        "--concurrency", type=count(), default=8, metavar="C", help="rollouts at once"
    )
    parser.add_argument(
        "--workers",
        type=count(1, 256),
        default=1,
        metavar="K",
        help="processes playing the rollouts, C/K at once each (default 1). One process's "
        "event loop uses one core: at hundreds of rollouts at once its model client is the "
        "limit, so K up to the free cores multiplies what is sent",
    )
    parser.add_argument(
        "--max-turns",
        type=count(),
        default=None,
        metavar="T",
        help="model calls per rollout (default: the env's max_turns, else 30)",
    )
    parser.add_argument("--temperature", type=number(float, 0, 100), default=None, metavar="X")


def _add_output(parser: argparse.ArgumentParser) -> None:
    """Where results go, and a built-in policy instead of a model."""
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="output directory (default runs/<env>--<model>--<digest of config and split>); "
        "one that already holds results needs --resume or --overwrite",
    )
    parser.add_argument(
        "--agent",
        metavar="POLICY",
        help="play a built-in policy instead of a model (default without --base-url: "
        "the env's reference policy)",
    )
    parser.add_argument("--resume", action="store_true", help="skip rollouts already in the output")
    parser.add_argument(
        "--overwrite",
        "--force",
        action="store_true",
        help="replace the results already in the output",
    )
    from datagauntlet.cli.options import add_split_argument

    add_split_argument(parser)


def _add_transport(parser: argparse.ArgumentParser) -> None:
    """Retries, timeouts, the HTTP layer and the event loop."""
    parser.add_argument(
        "--retries",
        type=count(0, 100),
        default=4,
        metavar="K",
        help="retries of a transient endpoint error, with backoff",
    )
    parser.add_argument(
        "--request-timeout",
        type=seconds(),
        default=None,
        metavar="S",
        help="total seconds one model request may take, however slowly it trickles (default 120)",
    )
    parser.add_argument(
        "--rollout-timeout",
        type=seconds(),
        default=None,
        metavar="S",
        help="total seconds one rollout may take (default 1800)",
    )
    parser.add_argument(
        "--http-transport",
        choices=("lean", "httpx"),
        default="lean",
        help="HTTP layer under the openai SDK: lean (default: HTTP/1.1 keep-alive on asyncio, "
        "a fraction of the CPU per call at hundreds at once) or httpx (its stock transport, "
        "for an endpoint or proxy the lean one does not speak, e.g. HTTP/2 only)",
    )
    parser.add_argument(
        "--event-loop",
        choices=LOOPS,
        default="auto",
        help="auto (default): uvloop when installed (about a fifth less CPU per model call at "
        "hundreds at once), else asyncio's own loop",
    )


def _add_modes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the endpoint, key and model, print the plan, and run nothing",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="play only shard I of N (every N-th task from the I-th); join shards with "
        "`datagauntlet merge`",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "run"


def default_out(env_id: str, label: str, config: dict[str, Any], split: str) -> Path:
    """runs/<env>--<model>--<digest>: runs of one model under two configs never share a
    directory (a realistic run would otherwise land on a hostile one)."""
    text = json.dumps({"config": config, "split": split}, sort_keys=True, default=str)
    digest = hashlib.blake2b(text.encode(), digest_size=4).hexdigest()
    return Path("runs") / f"{_slug(env_id)}--{_slug(label)}--{digest}"


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    index, sep, count = text.partition("/")
    if not sep or not index.isdigit() or not count.isdigit():
        raise ValueError(f"--shard must look like I/N (e.g. 0/4), got {text!r}")
    return int(index), int(count)


def _positive(name: str, value: float | None) -> None:
    if value is not None and not value > 0:
        raise ValueError(f"{name} must be > 0, got {value:g}")


def run(args: argparse.Namespace) -> int:
    from datagauntlet.cli.eval_play import model_factory, play
    from datagauntlet.cli.options import build_env
    from datagauntlet.core.output_files import write_output
    from datagauntlet.frontdoors.evaluate import SUMMARY_FILE, check_out_dir, shard_tasks
    from datagauntlet.frontdoors.models import DEFAULT_REQUEST_TIMEOUT
    from datagauntlet.frontdoors.summary import summarize_records

    _check_numbers(args)
    env = build_env(args.env, args.config)
    label, policy = _player(args, env)
    spec = _spec(args, label)
    spec.validate()
    out = args.out or default_out(env.id, label, env.config.as_dict(), args.split)
    if spec.shard is not None and not args.out:
        out = out.with_name(f"{out.name}--shard-{spec.shard[0]}-of-{spec.shard[1]}")
    check_out_dir(out, spec)
    request_timeout = args.request_timeout or DEFAULT_REQUEST_TIMEOUT
    if args.base_url:
        _preflight(args, request_timeout)
    total = len(shard_tasks(env.tasks(args.split, args.tasks), spec.shard)) * args.rollouts
    if args.dry_run:
        where = f"endpoint ok: {args.base_url}" if args.base_url else "no endpoint (a policy)"
        print(
            f"would run {total} rollouts ({args.tasks} tasks x {args.rollouts}) of {env.id} "
            f"[{env.config.changed() or 'defaults'}] with {label}; {where}; results in {out}"
        )
        return 0
    make_model = model_factory(args, env, policy, request_timeout)
    outcome = play(env, spec, make_model, out, total, args)
    if outcome is None:
        return 1
    summary = summarize_records(outcome.records, args.rollouts)
    summary["ran"], summary["skipped"] = outcome.ran, outcome.skipped
    text = json.dumps(summary, indent=2, sort_keys=True) + "\n"
    write_output(out / SUMMARY_FILE, text, force=True)  # this run's own (check_out_dir)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        _print_table(summary, env.weights, out, env.config.changed())
    return 1 if summary.get("failed") else 0


def _check_numbers(args: argparse.Namespace) -> None:
    _positive("--request-timeout", args.request_timeout)
    _positive("--rollout-timeout", args.rollout_timeout)
    if args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    if args.retries < 0:
        raise ValueError(f"--retries must be >= 0, got {args.retries}")


def _player(args: argparse.Namespace, env: Any) -> tuple[str, str | None]:
    """The run's label and, without an endpoint, the policy that plays."""
    if args.agent and args.base_url:
        raise ValueError("give either --agent or --base-url, not both")
    if args.base_url:
        if not args.model:
            raise ValueError("--model is required with --base-url")
        return args.model, None
    name = args.agent or env.reference
    policies = env.policies()
    if name not in policies:
        raise ValueError(f"{env.id} has no policy {name!r}; choose from {sorted(policies)}")
    return f"agent:{name}", name


def _spec(args: argparse.Namespace, label: str) -> Any:
    from datagauntlet.frontdoors.evaluate import DEFAULT_ROLLOUT_TIMEOUT, EvalSpec

    return EvalSpec(
        n=args.tasks,
        rollouts=args.rollouts,
        concurrency=args.concurrency,
        max_turns=args.max_turns,
        split=args.split,
        label=label,
        resume=args.resume,
        overwrite=args.overwrite,
        rollout_timeout=args.rollout_timeout or DEFAULT_ROLLOUT_TIMEOUT,
        shard=parse_shard(args.shard),
    )


def _preflight(args: argparse.Namespace, request_timeout: float) -> None:
    """The endpoint, key and model answer, before anything is written."""
    from datagauntlet.frontdoors.models import preflight

    problem = run_on_loop(
        preflight(
            args.base_url,
            args.model,
            args.api_key_env,
            min(15.0, request_timeout),
            args.http_transport,
        ),
        args.event_loop,
    )
    if problem:
        raise ValueError(problem)


def _print_table(
    summary: dict[str, Any], weights: Mapping[str, float], out: Path, changed: dict[str, Any]
) -> None:
    from rich.table import Table

    from datagauntlet.core.report import config_label

    table = Table(title=f"{summary['env']} · {summary['model']} · results in {out}")
    for col in ("config", "n", "failed", "mean reward"):
        table.add_column(col, justify="right" if col != "config" else "left")
    if "ci95" in summary:
        table.add_column("95% CI", justify="right")
    for name in weights:
        table.add_column(name, justify="right")
    table.add_column("turns", justify="right")
    row = [
        config_label(changed),
        str(summary["n"]),
        str(summary["failed"]),
        f"{summary['mean_reward']:.3f}",
    ]
    if "ci95" in summary:
        row.append(f"[{summary['ci95'][0]:.3f}, {summary['ci95'][1]:.3f}]")
    row += [f"{summary['components'][k]:.3f}" for k in weights]
    row.append(f"{summary['mean_turns']:.1f}")
    table.add_row(*row)
    console = table_console()
    console.print(table)
    failures = summary.get("failures") or {}
    if failures:
        console.print(f"{summary['failed']} of {summary['n']} rollouts failed:", markup=False)
        for kind, group in failures.items():
            console.print(f"  {kind} x{group['count']}: {group['first']}", markup=False)
