"""`datagauntlet mock-model`: one of an env's policies behind an OpenAI-compatible endpoint."""

from __future__ import annotations

import argparse
import sys

from datagauntlet.cli.options import add_config_argument, add_origin_arguments, port_number

NAME = "mock-model"
HELP = (
    "Serve a scripted model (one of an env's policies) at /v1/chat/completions on 127.0.0.1, "
    "for trying front doors without a real model."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", required=True, metavar="ID", help="environment id")
    add_config_argument(parser)
    parser.add_argument("--policy", metavar="NAME", help="default policy (default: the reference)")
    parser.add_argument(
        "--port", type=port_number, default=8800, metavar="P", help="0 picks a free port"
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    add_origin_arguments(parser)
    parser.add_argument(
        "--final-answer",
        action="store_true",
        help="for an env that reads a final message as its submission (dataclean): send the "
        "submission as that text, with no tool call",
    )


def run(args: argparse.Namespace) -> int:
    from datagauntlet.cli.options import build_env
    from datagauntlet.frontdoors.mock_model import MockModelServer

    env = build_env(args.env, args.config)
    server = MockModelServer(
        env,
        args.policy,
        args.host,
        args.port,
        args.final_answer,
        allow_hosts=args.allow_host,
        allow_origins=args.allow_origin,
    )
    # The first line names the URL, so scripts (and the test fixture) can read the port.
    print(f"mock model for {env.id} (policy {server.default}) at {server.base_url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    sys.stdout.flush()
    return 0
