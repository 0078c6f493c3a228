"""dataclean speed: generating and scoring 100,000 rows, a program over them, the CLI on a file.

Targets: a 10-operation program over 100,000 rows in under 1 s on one core (issue 5);
generating a 100,000-row task in under 1.5 s and scoring it in under 0.3 s (issue 14). Each
generation and scoring figure is printed next to its floor measured in the same run: raw
blake2b, two per cell (one clean draw, one corruption draw), and two `==` per cell on columns
already aligned by record. Run: `python benchmarks/bench_dataclean.py [ROWS]`.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from operator import eq
from pathlib import Path
from typing import Any

from benchlib import Figure, Report, blake2b_floor

import datagauntlet as dg
from datagauntlet.envs.dataclean.grading.grader import grade
from datagauntlet.envs.dataclean.solver.policies import careful_program, read_policy
from datagauntlet.envs.dataclean.tool.csvio import read_csv, write_csv
from datagauntlet.envs.dataclean.tool.engine import Table, run_program
from datagauntlet.envs.dataclean.tool.program import Schema, validate_program
from datagauntlet.envs.dataclean.world import families as fam
from datagauntlet.envs.dataclean.world.generator import generate

FAMILIES = ("crm", "orders", "inventory")
_PER_FAMILY = tuple(
    figure
    for family in FAMILIES
    for figure in (
        Figure(
            f"{family}-generate",
            f"{family}: generate the task",
            "s CPU",
            floor="raw blake2b, 2 a cell",
            target=1.5,
        ),
        Figure(f"{family}-program-10", f"{family}: 10-operation program", "s CPU", target=1.0),
        Figure(f"{family}-program-careful", f"{family}: careful program", "s CPU"),
        Figure(
            f"{family}-score",
            f"{family}: score the result",
            "s CPU",
            floor="2 == a cell, columns pre-aligned",
            target=0.3,
        ),
    )
)
FIGURES = (*_PER_FAMILY, Figure("crm-cli", "crm: CSV read+validate+run+write", "s CPU"))


def best_of(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """The fastest of `repeat` runs in CPU seconds of this process: on a shared machine a
    wall clock mostly measures the neighbours."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def compare_floor(truth: Table, after: Table, columns: list[str]) -> float:
    """Seconds to compare every scored cell twice (before and after) with columns pre-aligned."""
    start = time.process_time()
    for col in columns:
        t, a = truth.data[col], after.data[col]
        sum(map(eq, t, a))
        sum(map(eq, t, a))
    return time.process_time() - start


def ten_operations(oracle: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ten single-column operations taken from the careful program (the issue's yardstick)."""
    out: list[dict[str, Any]] = []
    for op in oracle:
        if "columns" in op:
            out += [{**op, "columns": [c]} for c in op["columns"]]
        else:
            out.append(op)
    dedupe = [op for op in out if op["op"] == "dedupe"]
    rest = [op for op in out if op["op"] != "dedupe"]
    return rest[: 10 - len(dedupe)] + dedupe


def bench_family(family: str, rows: int, report: Report) -> None:
    env = dg.make("dataclean", family=family, rows=rows)
    task = env.tasks("eval", 1)[0]
    gen, world = best_of(lambda: generate(task.seed, env.config), repeat=2)
    cells = len(world.truth) * len(world.family.names)
    gen_floor = min(blake2b_floor(2 * cells) for _ in range(2))
    policy = read_policy(world.policy_text)
    oracle = careful_program(policy, batch_aliases=True, month_first=policy.month_first)
    protected = frozenset(fam.PROTECTED_COLUMNS) & set(world.family.names)
    schema = Schema(world.family.names, protected, world.family.dedupe_keys)
    full = validate_program(oracle, schema)
    ten = validate_program(ten_operations(oracle), schema)
    passes = sum(max(1, len(op.columns)) for op in full)
    t_ten, _ = best_of(lambda: run_program(world.dirty, ten))
    t_full, (out, _) = best_of(lambda: run_program(world.dirty, full))
    editable = [c.name for c in world.family.editable]
    args = (world.truth, world.dirty, out, fam.PRIMARY_KEY, editable, len(full), "")
    # As an episode scores: with the masks of cells that arrived right, which the generator
    # makes while its columns are still aligned (their cost is in the generation figure).
    t_score, score = best_of(lambda: grade(*args, world.arrived_right))
    t_general, _ = best_of(lambda: grade(*args))  # the same score, masks worked out here
    score_floor = min(compare_floor(world.truth, out, editable) for _ in range(3))
    report.add(f"{family}-generate", gen, floor=gen_floor)
    report.add(f"{family}-program-10", t_ten)
    report.add(f"{family}-program-careful", t_full)
    report.add(f"{family}-score", t_score, floor=score_floor)
    report.add(f"  {family}: score, arrived-right masks worked out", t_general, "s CPU")
    report.note(
        f"{family}: {len(world.dirty):,} rows x {len(world.family.names)} columns, careful "
        f"program {len(full)} ops / {passes} column passes, reward {score.reward}"
    )
    if family != "crm":
        return
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        write_csv(world.dirty, src)
        size = src.stat().st_size / 1e6

        def cli() -> None:
            table = read_csv(src)
            cli_schema = Schema(table.columns, protected, (fam.PRIMARY_KEY,))
            result, _ = run_program(table, validate_program(oracle, cli_schema))
            write_csv(result, dst)

        t_cli, _ = best_of(cli)
    report.add("crm-cli", t_cli)
    report.note(f"crm CSV file {size:.1f} MB")


def main(rows: int = 100_000) -> None:
    report = Report(f"dataclean speed: {rows:,} unique rows, one process, CPU seconds", FIGURES)
    report.note("targets are for 100,000 rows on one core")
    for family in FAMILIES:
        bench_family(family, rows, report)
    report.show()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
