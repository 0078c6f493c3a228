"""`datagauntlet mcp`: serve one episode's tools over MCP (stdio or streamable HTTP)."""

from __future__ import annotations

import argparse
import sys

from datagauntlet.cli.options import add_config_argument

NAME = "mcp"
HELP = (
    "Serve the tools of one episode over the Model Context Protocol, for any MCP-capable "
    "agent; the submitting tool's result carries the score (also logged on stderr)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", metavar="ENV", help="environment id")
    add_config_argument(parser)
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="world seed (default: the seed of task --task of --split)",
    )
    parser.add_argument("--task", type=int, default=0, metavar="I", help="task index (default 0)")
    parser.add_argument("--split", default="eval", choices=("train", "eval", "test"))
    parser.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8765, metavar="P", help="HTTP port; 0 picks one"
    )


def run(args: argparse.Namespace) -> int:
    from datagauntlet.cli.options import build_env
    from datagauntlet.core.episode import Task

    try:
        from datagauntlet.frontdoors import mcp_server
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ValueError("the mcp SDK is missing: pip install 'datagauntlet[mcp]'") from exc
    env = build_env(args.env, args.config)
    if args.task < 0:
        raise ValueError("--task must be >= 0")
    task = env.make_task(args.split, args.task)
    if args.seed is not None:
        task = Task(f"seed-{args.seed}", args.seed, args.split, args.task)
    if args.transport == "stdio":
        mcp_server.serve_stdio(env, task)
    else:

        def announce(url: str) -> None:
            print(f"MCP server for {env.id} task {task.id} at {url}", file=sys.stderr, flush=True)

        mcp_server.serve_http(env, task, args.host, args.port, announce)
    return 0
