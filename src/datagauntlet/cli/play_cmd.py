"""`datagauntlet play`: a person plays one episode at a prompt, calling the tools by hand."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any, TextIO

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
Type a tool call as  NAME {{json arguments}}  (or NAME key=value ...), for example:
  {example}
Commands: help (this text and the tools), tools (list tools and their arguments),
score (shown once the episode ends), quit."""

_EXAMPLES = {
    "string": "...",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "object": {},
}


def example_call(spec: dict[str, Any]) -> str:
    """`name {args}` for one tool spec, with a placeholder for each required argument."""
    fn = spec["function"]
    params = fn.get("parameters", {})
    args = {}
    for key in params.get("required", []):
        kind = params.get("properties", {}).get(key, {}).get("type", "string")
        kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
        args[key] = _EXAMPLES.get(kind)
    return f"{fn['name']} {json.dumps(args)}"


def usage(ep: Episode) -> str:
    return USAGE.format(example=example_call(ep.tool_specs[0]) if ep.tool_specs else "(no tools)")


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
    print(usage(ep), file=out)
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
        if head in ("help", "?"):
            print(usage(ep), file=out)
            _show_tools(ep, out)
            continue
        if head == "tools":
            _show_tools(ep, out)
            continue
        if head == "score":  # the score reads hidden state: not before the end
            print("the score is shown when the episode ends", file=out)
            continue
        rest = rest.strip()
        if rest and not rest.startswith(("{", "[")):
            try:
                rest = json.dumps(dict(_pairs(rest)))
            except ValueError as exc:  # shlex: an unclosed quote
                print(f"could not read the arguments: {exc}; type help for the syntax", file=out)
                continue
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
    try:
        play_loop(ep, sys.stdin, sys.stdout)
    finally:
        ep.close()
    return 0
