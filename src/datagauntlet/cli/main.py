"""Entry point: builds the parser from one module per subcommand and dispatches to it.

Each subcommand module defines `NAME`, `HELP`, `add_arguments(parser)` and `run(args) -> int`,
and imports its heavy dependencies inside `run`, so `datagauntlet --help` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from types import ModuleType
from typing import NoReturn

from datagauntlet import __version__


class CliParser(argparse.ArgumentParser):
    """Usage mistakes end in one line on stderr (what is wrong, where to look) and exit 2."""

    def error(self, message: str) -> NoReturn:
        # "argument -n/--tasks: must be >= 1" reads as "-n must be >= 1"
        message = re.sub(r"^argument ([^/:\s]+)(?:/[^:]*)?: must ", r"\1 must ", message)
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see `{self.prog} --help`)\n")


def one_line(text: str) -> str:
    return " ".join(str(text).split())


SUBCOMMANDS = (
    "datagauntlet.cli.list_cmd",
    "datagauntlet.cli.calibrate_cmd",
    "datagauntlet.cli.gates_cmd",
    "datagauntlet.cli.check_cmd",
    "datagauntlet.cli.play_cmd",
    "datagauntlet.cli.serve_cmd",
    "datagauntlet.cli.eval_cmd",
    "datagauntlet.cli.mock_model_cmd",
    "datagauntlet.cli.mcp_cmd",
    "datagauntlet.cli.server_cmd",
    "datagauntlet.cli.merge_cmd",
    "datagauntlet.cli.sandbox_cmd",
    "datagauntlet.cli.report_cmd",
    "datagauntlet.cli.show_cmd",
    "datagauntlet.cli.rescore_cmd",
)


def env_commands() -> list[str]:
    """The envs' own subcommands (a registration's `command` hook), imported to list them."""
    from datagauntlet.core.registry import registrations

    return [reg.command for _, reg in sorted(registrations().items()) if reg.command]


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    parser = CliParser(
        prog="datagauntlet",
        description="Verifiable data-integration environments where the tools fail quietly.",
        epilog="Run `datagauntlet COMMAND --help` for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"datagauntlet {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules: dict[str, ModuleType] = {}
    for path in [*SUBCOMMANDS, *env_commands()]:
        module = importlib.import_module(path)
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        modules[module.NAME] = module
    return parser, modules


def main(argv: list[str] | None = None) -> int:
    parser, modules = build_parser()
    # KEY=VALUE config pairs may follow options (`play ENV --seed 3 profile=hostile`), which
    # argparse's plain parse_args rejects; collect them into `config` here.
    args, extra = parser.parse_known_args(argv)
    pairs = [a for a in extra if "=" in a and not a.startswith("-")]
    if len(pairs) != len(extra) or (pairs and not hasattr(args, "config")):
        parser.error(f"unrecognized arguments: {' '.join(a for a in extra if a not in pairs)}")
    if pairs:
        args.config = [*args.config, *pairs]
    if not args.command:
        parser.error(f"give a command: {', '.join(modules)}")
    try:
        if getattr(args, "secret_file", None):
            from datagauntlet.core.secret import use_secret_file

            use_secret_file(args.secret_file)  # also reaches worker processes
        return int(modules[args.command].run(args) or 0)
    except ValueError as exc:  # bad config or arguments: a clear message, not a traceback
        print(f"datagauntlet {args.command}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of our output went away (`| head`): stop quietly
        _silence_stdout()
        return 141
    except OSError as exc:  # a file or address the user named cannot be used
        where = f": {exc.filename}" if exc.filename else ""
        print(
            f"datagauntlet {args.command}: error: {one_line(exc.strerror or exc)}{where}",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        return 130


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
