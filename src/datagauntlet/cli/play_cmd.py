"""`datagauntlet play`: a person plays one episode at a prompt, calling the tools by hand."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import TextIO

from datagauntlet.cli.options import (
    add_config_argument,
    add_task_arguments,
    build_env,
    resolve_task,
)
from datagauntlet.core.episode import Episode

NAME = "play"
HELP = "Play one episode by hand: call tools at a prompt and see the score when it ends."

USAGE = """\
Type a tool call as  NAME {json arguments}  for example:  fetch_page {"cursor": null}
Commands: tools (list tools and their arguments), score (score so far), quit."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", metavar="ENV", help="environment id (see `datagauntlet list`)")
    add_task_arguments(parser)
    add_config_argument(parser)


def _show_tools(ep: Episode, out: TextIO) -> None:
    for spec in ep.tool_specs:
        fn = spec["function"]
        args = ", ".join(fn["parameters"].get("properties", {}))
        print(f"  {fn['name']}({args}): {fn['description']}", file=out)


def play_loop(ep: Episode, lines: TextIO, out: TextIO) -> None:
    print(ep.system_prompt, "\n", file=out)
    print(ep.prompt, "\n", file=out)
    print(USAGE, file=out)
    while not ep.done:
        print("> ", end="", file=out, flush=True)
        line = lines.readline()
        if not line:
            break
        line = line.strip()
        if not line:
            continue
        head, _, rest = line.partition(" ")
        if head in ("quit", "exit"):
            break
        if head == "tools":
            _show_tools(ep, out)
            continue
        if head == "score":
            print(json.dumps(ep.score().as_dict(), indent=2), file=out)
            continue
        rest = rest.strip()
        if rest and not rest.startswith(("{", "[")):
            rest = json.dumps(dict(_pairs(rest)))
        result = ep.call(head, rest or {})
        print(json.dumps(result, indent=2), file=out)
    score = ep.score()
    print(f"\nepisode over ({ep.stop_reason or 'stopped'}): reward {score.reward:.3f}", file=out)
    for name, comp in score.components.items():
        print(f"  {name}: {comp['value']:.3f} x {comp['weight']}", file=out)
    print(f"  metrics: {json.dumps(score.metrics)}", file=out)


def _pairs(text: str) -> list[tuple[str, object]]:
    """`key=value` words as a convenience; values parsed as JSON when they can be."""
    out: list[tuple[str, object]] = []
    for word in shlex.split(text):
        key, _, value = word.partition("=")
        try:
            out.append((key, json.loads(value)))
        except ValueError:
            out.append((key, value))
    return out


def run(args: argparse.Namespace) -> int:
    env = build_env(args.env, args.config)
    ep = env.episode(resolve_task(env, args.seed, args.split))
    play_loop(ep, sys.stdin, sys.stdout)
    return 0
