"""`datagauntlet sandbox`: check which walls stand on this host, or run a script behind them."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from datagauntlet.cli.options import count, seconds

NAME = "sandbox"
HELP = "Check the Python sandbox's walls on this host, or run a script inside it."

EXIT_NOT_OK = 1  # the script failed, timed out or tripped a wall (run); a wall is down (check)
EXIT_USAGE = 2
EXIT_REFUSED = 3  # a --require'd wall is down: the script did not run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sandbox_command", metavar="ACTION")
    check = sub.add_parser(
        "check",
        help="raise every wall, then try one escape per wall that only it stops",
        description="Raise every wall in a probe run and report which are up, then, for each "
        "wall alone, try an escape only that wall stops and report whether it held. "
        "Exit 0 when all six walls are up and held, 1 otherwise.",
    )
    check.add_argument("--json", action="store_true", help="print one JSON object")
    run = sub.add_parser(
        "run",
        help="run SCRIPT.py with --workspace as its only writable place",
        description="Run a Python script behind every wall (or those given with --walls). "
        "The workspace is used in place (its files are handed to the run's unprivileged "
        "user) unless --copy is given. Exit 0 when the script exits 0 in time with no "
        "violation, 1 otherwise, 3 when a --require'd wall is down.",
    )
    run.add_argument("script", metavar="SCRIPT.py", help="the script to run")
    run.add_argument("--workspace", required=True, metavar="DIR", help="its working directory")
    run.add_argument("--json", action="store_true", help="print the result as one JSON object")
    run.add_argument("--timeout", type=seconds(), default=30.0, metavar="S", help="wall clock (30)")
    run.add_argument("--cpu", type=seconds(), default=None, metavar="S", help="CPU (= timeout)")
    run.add_argument(
        "--memory", type=count(1, 1 << 20), default=1024, metavar="MB", help="address space"
    )
    run.add_argument(
        "--file-size", type=count(1, 1 << 20), default=256, metavar="MB", help="largest file"
    )
    run.add_argument(
        "--open-files", type=count(1, 1 << 20), default=256, metavar="N", help="open fds"
    )
    run.add_argument(
        "--processes", type=count(1, 1 << 16), default=256, metavar="N", help="threads (256)"
    )
    run.add_argument("--output", type=count(1, 1 << 40), default=65_536, metavar="BYTES",
                     help="stdout/stderr kept, each (65536)")  # fmt: skip
    run.add_argument("--flood", type=count(1, 1 << 40), default=64 << 20, metavar="BYTES",
                     help="output past which the run is killed (64 MiB)")  # fmt: skip
    run.add_argument("--walls", default=None, metavar="A,B", help="walls to raise (all six)")
    run.add_argument("--require", default=None, metavar="A,B", help="refuse unless these are up")
    run.add_argument("--copy", action="store_true", help="run in a fresh copy of the workspace")


def run(args: argparse.Namespace) -> int:
    if args.sandbox_command == "check":
        return _check(args)
    if args.sandbox_command == "run":
        return _run(args)
    print("datagauntlet sandbox: choose an action: check or run (see --help)", file=sys.stderr)
    return EXIT_USAGE


def _walls(text: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    from datagauntlet.kits.sandbox.walls import WALLS, check_names

    if text is None:
        return default
    names = [w.strip() for w in text.split(",") if w.strip()]
    if not names:
        raise ValueError(f"--walls/--require {text!r} names no wall; known: {', '.join(WALLS)}")
    return check_names(names, "--walls/--require")


def _run(args: argparse.Namespace) -> int:
    from datagauntlet.core.user_files import read_bytes
    from datagauntlet.kits.sandbox import Limits, WallsUnavailable, fresh_workspace, run_script
    from datagauntlet.kits.sandbox.runner import MAX_SCRIPT_BYTES
    from datagauntlet.kits.sandbox.walls import WALLS

    if not args.workspace:
        raise ValueError("--workspace is empty; name the directory the script may write in")
    script = Path(args.script)
    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise ValueError(f"workspace is not a directory: {workspace}")
    walls = _walls(args.walls, WALLS)
    require = _walls(args.require, ())
    cpu = args.cpu if args.cpu is not None else args.timeout
    limits = Limits(
        timeout_s=args.timeout,
        cpu_s=max(1, round(cpu)),
        memory_mb=args.memory,
        file_size_mb=args.file_size,
        open_files=args.open_files,
        processes=args.processes,
        output_bytes=args.output,
        flood_bytes=args.flood,
    )
    code = read_bytes(script, MAX_SCRIPT_BYTES, "script")
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:  # a TERM or HUP unwinds like ^C, so the workspace is handed back to its owner
        if args.copy:
            with fresh_workspace(workspace) as ws:
                res = run_script(code, ws, limits, walls=walls, require=require,
                                 filename=script.name)  # fmt: skip
        else:
            res = run_script(script, workspace, limits, walls=walls, require=require)
    except WallsUnavailable as exc:
        print(f"datagauntlet sandbox: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if args.json:
        print(json.dumps(res.to_dict(), indent=1))
    else:
        sys.stdout.write(res.stdout)
        sys.stderr.write(res.stderr)
        print(_summary(res), file=sys.stderr)
    return 0 if res.ok else EXIT_NOT_OK


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _summary(res) -> str:  # type: ignore[no-untyped-def]
    parts = [
        f"exit {res.exit_code}",
        f"{res.wall_s:.3f} s wall",
        f"{res.cpu_s:.3f} s cpu",
        f"walls up: {', '.join(res.walls) or 'none'}",
    ]
    if res.timed_out:
        parts.append("timed out")
    if res.truncated:
        parts.append("output truncated")
    line = "sandbox: " + "; ".join(parts)
    for v in res.violations:
        line += f"\nsandbox: violation [{v.wall}] {v.event} {v.detail}".rstrip()
    for wall, why in res.walls_down.items():
        if why != "not requested":
            line += f"\nsandbox: wall down: {wall}: {why}"
    return line


def _check(args: argparse.Namespace) -> int:
    from datagauntlet.kits.sandbox.check import check_host

    report = check_host()
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        width = max(len(w["wall"]) for w in report["walls"])
        for w in report["walls"]:
            state = "up  " if w["up"] else "DOWN"
            held = "" if w["held"] is None else ("  held" if w["held"] else "  DID NOT HOLD")
            print(f"{w['wall']:<{width}}  {state}{held}  {w['detail']}")
            if w["probe"]:
                print(f"{'':<{width}}        probe: {w['probe']}")
        print(f"print(1) round trip with every wall: {report['round_trip_ms']:.1f} ms")
    return 0 if report["all_up"] else EXIT_NOT_OK
