"""`datagauntlet dataclean apply PROGRAM.json INPUT.csv -o OUTPUT.csv`: the engine as a tool.

The env's own CLI subcommand (its registration's command hook): the CLI lists it without
importing anything here until it runs. The program is validated exactly as in the environment
(deny by default, protected columns, bounded sizes); the report says how many cells each
operation changed.
"""

from __future__ import annotations

import argparse
import json
import sys

NAME = "dataclean"
HELP = "Run a dataclean cleaning program on a real CSV file (subcommand: apply)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(dataclean_parser=parser)
    sub = parser.add_subparsers(dest="dataclean_command", metavar="COMMAND")
    apply = sub.add_parser(
        "apply",
        help="apply PROGRAM.json to INPUT.csv and write OUTPUT.csv",
        description=(
            'Validate a cleaning program (a JSON array of operations, or {"operations": [...]}) '
            "against the CSV header, run it, write the cleaned CSV and report the cells each "
            "operation changed. record_id, customer_id and notes are protected when present."
        ),
    )
    apply.add_argument("program", metavar="PROGRAM.json", help="the cleaning program")
    apply.add_argument("input", metavar="INPUT.csv", help="the table to clean (UTF-8, header row)")
    apply.add_argument(
        "-o", "--output", required=True, metavar="OUTPUT.csv", help="where to write ('-': stdout)"
    )
    apply.add_argument(
        "--key",
        action="append",
        metavar="COLUMN",
        help="a column dedupe may key on (repeatable; default: record_id)",
    )
    apply.add_argument(
        "--protect",
        action="append",
        default=[],
        metavar="COLUMN",
        help="one more column no operation may change (repeatable)",
    )
    apply.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    if args.dataclean_command != "apply":
        raise ValueError("give a subcommand: apply (see `datagauntlet dataclean --help`)")
    from datagauntlet.envs.dataclean.tool.csvio import check_output, read_csv, write_csv
    from datagauntlet.envs.dataclean.tool.engine import run_program
    from datagauntlet.envs.dataclean.tool.program import (
        MAX_PROGRAM_BYTES,
        Schema,
        parse_program_text,
        validate_program,
    )
    from datagauntlet.envs.dataclean.world.families import PRIMARY_KEY, PROTECTED_COLUMNS

    check_output(args.output, args.input)
    text = _read_program(args.program, MAX_PROGRAM_BYTES)
    raw = parse_program_text(text)
    table = read_csv(args.input)
    unknown = [c for c in [*(args.key or []), *args.protect] if c not in table.columns]
    if unknown:
        raise ValueError(f"--key/--protect name {unknown[0]!r}, which is not a column of the CSV")
    keys = args.key or ([PRIMARY_KEY] if PRIMARY_KEY in table.columns else [])
    protected = (set(PROTECTED_COLUMNS) | set(args.protect)) & set(table.columns)
    schema = Schema(table.columns, frozenset(protected), tuple(keys))
    program = validate_program(raw, schema)
    out, reports = run_program(table, program)
    write_csv(out, args.output)
    report = {
        "rows_in": len(table),
        "rows_out": len(out),
        "operations": [r.as_dict() for r in reports],
        "cells_changed": sum(r.cells_changed for r in reports),
    }
    stream = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        print(json.dumps(report, sort_keys=True), file=stream)
        return 0
    for op, r in zip(program, reports, strict=True):
        target = ", ".join(op.keys or op.columns)
        extra = f", {r.rows_removed} rows removed" if op.op == "dedupe" else ""
        print(
            f"operations[{r.index}] {op.op} ({target}): {r.cells_changed} cells{extra}", file=stream
        )
    print(
        f"{report['cells_changed']} cells changed; {len(table)} rows in, {len(out)} rows out; "
        f"wrote {args.output}",
        file=stream,
    )
    return 0


def _read_program(path: str, limit: int) -> str:
    from datagauntlet.core.user_files import read_text

    return read_text(path, limit, "program file")
