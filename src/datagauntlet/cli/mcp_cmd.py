"""`datagauntlet mcp`: serve one episode's tools over MCP (stdio or streamable HTTP)."""

from __future__ import annotations

import argparse
import sys

from datagauntlet.cli.options import (
    add_config_argument,
    add_origin_arguments,
    add_task_arguments,
    port_number,
)

NAME = "mcp"
HELP = (
    "Serve the tools of one episode over the Model Context Protocol, for any MCP-capable "
    "agent; the submitting tool's result carries the score (also logged on stderr)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", metavar="ENV", help="environment id")
    add_config_argument(parser)
    add_task_arguments(parser)
    parser.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=8765, metavar="P", help="HTTP port; 0 picks one"
    )
    add_origin_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from datagauntlet.cli.options import build_env, resolve_task

    try:
        from datagauntlet.frontdoors import mcp_server
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ValueError("the mcp SDK is missing: pip install 'datagauntlet[mcp]'") from exc
    env = build_env(args.env, args.config)
    task = resolve_task(env, args.seed, args.split)
    if args.transport == "stdio":
        mcp_server.serve_stdio(env, task)
    else:

        def announce(url: str) -> None:
            print(f"MCP server for {env.id} task {task.id} at {url}", file=sys.stderr, flush=True)

        mcp_server.serve_http(
            env, task, args.host, args.port, announce, args.allow_host, args.allow_origin
        )
    return 0
