"""`datagauntlet serve`: one episode's native API over real HTTP on 127.0.0.1."""

from __future__ import annotations

import argparse

from datagauntlet.cli.options import (
    add_config_argument,
    add_origin_arguments,
    add_task_arguments,
    build_env,
    port_number,
    resolve_task,
)

NAME = "serve"
HELP = (
    "Serve one episode's native API over real HTTP on 127.0.0.1 "
    "(dirty-integration: GET /records, POST /submit, GET /score)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", metavar="ENV", help="environment id (see `datagauntlet list`)")
    add_task_arguments(parser)
    parser.add_argument(
        "--port", type=port_number, default=8765, help="port on 127.0.0.1 (0: any free)"
    )
    add_origin_arguments(parser)
    add_config_argument(parser)


def run(args: argparse.Namespace) -> int:
    from datagauntlet.frontdoors.serve import EpisodeHttpServer

    env = build_env(args.env, args.config)
    task = resolve_task(env, args.seed, args.split)
    try:
        server = EpisodeHttpServer.open(
            env, task, port=args.port, allow_hosts=args.allow_host, allow_origins=args.allow_origin
        )
    except OSError as exc:
        from datagauntlet.frontdoors.http_json import listen_error

        raise listen_error("127.0.0.1", args.port, exc) from None
    print(f"serving {env.id} task {task.id} at {server.url} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
