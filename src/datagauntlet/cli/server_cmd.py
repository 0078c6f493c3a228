"""`datagauntlet server`: one process serving many episodes of every env."""

from __future__ import annotations

import argparse

from datagauntlet.cli.options import port_number

NAME = "server"
HELP = (
    "Serve many episodes of any registered env at once: JSON over HTTP, WebSocket stepping, "
    "MCP per session and OpenEnv's API (extra `server`)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=8300, metavar="P", help="0 picks a free port"
    )
    parser.add_argument("--max-sessions", type=int, default=1024, metavar="N")
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=600.0,
        metavar="S",
        help="reap sessions idle this long",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also accept this Host header (default: loopback names only)",
    )


def run(args: argparse.Namespace) -> int:
    from datagauntlet.frontdoors.server.run import serve
    from datagauntlet.frontdoors.server.sessions import Limits

    if args.max_sessions < 1:
        raise ValueError("--max-sessions must be >= 1")
    if args.idle_seconds <= 0:
        raise ValueError("--idle-seconds must be > 0")
    limits = Limits(max_sessions=args.max_sessions, idle_seconds=args.idle_seconds)
    serve(args.host, args.port, limits, args.allow_host)
    return 0
