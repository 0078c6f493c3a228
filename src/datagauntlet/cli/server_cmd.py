"""`datagauntlet server`: many episodes of every env at once, on one or several processes."""

from __future__ import annotations

import argparse
import dataclasses
import re

from datagauntlet.cli.options import add_origin_arguments, count, port_number, seconds

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
    parser.add_argument("--max-sessions", type=count(), default=1024, metavar="N")
    parser.add_argument(
        "--max-world-bytes",
        type=byte_size,
        default=None,
        metavar="SIZE",
        help="memory the open sessions' worlds may hold, across all workers, e.g. 4G or 512M "
        "(default: half of this machine's memory); a session past it is refused",
    )
    parser.add_argument(
        "--idle-seconds",
        type=seconds(),
        default=600.0,
        metavar="S",
        help="reap sessions idle this long",
    )
    add_origin_arguments(parser)
    parser.add_argument(
        "--trust-client-config",
        action="store_true",
        help="accept every config key from clients, family_module and file paths included "
        "(default: only the keys each env declares safe for remote clients)",
    )
    parser.add_argument(
        "--workers",
        type=count(1, 256),
        default=None,
        metavar="N",
        help="server processes behind the one address, each holding its own sessions "
        "(default: one per core, at most 8; 1 serves in this process)",
    )


_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def byte_size(text: str) -> int:
    """argparse type of a size: bytes, or a number with K, M, G or T (powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not m or float(m.group(1)) * _UNITS[m.group(2)] < 1:
        raise argparse.ArgumentTypeError(f"a size is bytes or a number with K/M/G, got {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def run(args: argparse.Namespace) -> int:
    from datagauntlet.frontdoors.server.run import serve
    from datagauntlet.frontdoors.server.sessions import Limits
    from datagauntlet.frontdoors.server.workers import MAX_WORKERS, default_workers

    workers = default_workers() if args.workers is None else args.workers
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"--workers must be 1-{MAX_WORKERS}, got {workers}")
    if args.max_sessions < 1:
        raise ValueError("--max-sessions must be >= 1")
    if args.idle_seconds <= 0:
        raise ValueError("--idle-seconds must be > 0")
    limits = Limits(
        max_sessions=args.max_sessions,
        idle_seconds=args.idle_seconds,
        trust_client_config=args.trust_client_config,
    )
    if args.max_world_bytes is not None:
        limits = dataclasses.replace(limits, max_world_bytes=args.max_world_bytes)
    return serve(
        args.host,
        args.port,
        limits,
        args.allow_host,
        workers=workers,
        allowed_origins=args.allow_origin,
    )
