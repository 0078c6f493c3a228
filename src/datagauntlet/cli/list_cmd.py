"""`datagauntlet list`: the registered environments and their config fields."""

from __future__ import annotations

import argparse
import dataclasses

NAME = "list"
HELP = "List the registered environments, their tools, policies and config defaults."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ids", action="store_true", help="print only the ids, one per line")


def run(args: argparse.Namespace) -> int:
    from datagauntlet.core.registry import env_class, list_envs

    for env_id in list_envs():
        if args.ids:
            print(env_id)
            continue
        cls = env_class(env_id)
        env = cls()
        fields = ", ".join(
            f"{f.name}={getattr(env.config, f.name)!r}" for f in dataclasses.fields(env.config)
        )
        ep = env.episode(env.tasks("eval", 1)[0])
        ep.close()  # only its tool list is read
        print(f"{env_id}")
        print(f"  tools:    {', '.join(ep.tool_names)}")
        print(f"  policies: {', '.join(env.policies())} (reference: {env.reference})")
        print(f"  rewards:  {', '.join(f'{k} {w}' for k, w in env.weights.items())}")
        print(f"  config:   {fields}")
    return 0
