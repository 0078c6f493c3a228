"""Options shared by subcommands: env config as KEY=VALUE pairs."""

from __future__ import annotations

import argparse
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.core.numbers import count, number, seconds  # noqa: F401  (shared by commands)
from datagauntlet.core.registry import env_class


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "config",
        nargs="*",
        metavar="KEY=VALUE",
        help="environment config, e.g. profile=hostile num_records=200",
    )


def parse_pairs(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"config must be KEY=VALUE, got {pair!r}")
        out[key.strip().replace("-", "_")] = value
    return out


def build_env(env_id: str, pairs: list[str]) -> Environment:
    cls = env_class(env_id)
    return cls(cls.config_cls.from_strings(parse_pairs(pairs)))


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed",
        "--task",
        dest="seed",
        type=number(int, 0, 2**63 - 1),
        default=0,
        metavar="S",
        help="which task: task number S of --split (default 0); the same S gives the same world",
    )
    add_split_argument(parser)


def add_split_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--split",
        default="eval",
        metavar="SPLIT",
        help="train, eval or test (public: anyone can rebuild them), or the held-out private "
        "and private-train (need the secret); default eval",
    )
    parser.add_argument(
        "--secret-file",
        metavar="PATH",
        help="file holding the secret that keys held-out splits (else $DATAGAUNTLET_SECRET)",
    )


def resolve_task(env: Environment, seed: int, split: str) -> Task:
    if seed < 0:
        raise ValueError("--seed must be >= 0")
    found = env.tasks(split, 1, start=seed)
    if not found:  # a split with a fixed number of tasks (a curated case file)
        size = len(env.tasks(split))
        raise ValueError(
            f"--seed {seed} is out of range: the {split} split of {env.id} has {size} tasks "
            f"(0 to {size - 1})"
        )
    return found[0]


def _argparse_type(check: Any) -> Any:
    def parse(text: str) -> str:
        try:
            return str(check(text))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def add_origin_arguments(parser: argparse.ArgumentParser) -> None:
    """--allow-host / --allow-origin: what the origin guard accepts beyond the server's own
    loopback names and origin (frontdoors/origin_guard.py)."""
    from datagauntlet.frontdoors.origin_guard import check_allowed_host, check_allowed_origin

    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=_argparse_type(check_allowed_host),
        metavar="NAME",
        help="also answer requests whose Host (and Origin) is NAME, NAME:PORT or *.SUFFIX "
        "(repeatable); by default only loopback names on the server's port are answered, so a "
        "web page cannot reach the server",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        type=_argparse_type(check_allowed_origin),
        metavar="URL",
        help="also answer browser requests from this origin, e.g. http://localhost:3000 "
        "(repeatable); by default only the server's own origin is",
    )


def port_number(text: str) -> int:
    """argparse type of a TCP port: 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a port is a number, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535 (0: any free port), got {port}")
    return port


def table_console(stderr: bool = False) -> Any:
    """A rich console that does not squeeze tables into 80 columns when output is piped."""
    from rich.console import Console

    console = Console(stderr=stderr)
    if not console.is_terminal:
        console.width = max(console.width, 140)
    return console
