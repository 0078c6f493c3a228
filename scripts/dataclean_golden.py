"""Digests of generated dataclean tasks and of their scores, to prove a speed cut changed no byte.

    python scripts/dataclean_golden.py            # one line per case: name, sha256
    python scripts/dataclean_golden.py --big      # adds 20,000- and 100,000-row tables

Run it before and after a change and diff the two outputs. The cases cover every built-in
family, the drawn default size and fixed sizes, and made-up layouts in which every column kind
can be missing, zero or oddly wide (what a family module may declare). The test
tests/dataclean/test_dataclean_golden.py pins the small cases.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import replace
from typing import Any

from datagauntlet.core.seeding import task_seed
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.grading.grader import grade
from datagauntlet.envs.dataclean.solver.policies import careful_program, read_policy
from datagauntlet.envs.dataclean.tool.engine import Table, run_program
from datagauntlet.envs.dataclean.tool.program import Schema, validate_program
from datagauntlet.envs.dataclean.world import families as fam
from datagauntlet.envs.dataclean.world.generator import CleaningTask, generate

KINDS = (
    fam.NAME, fam.EMAIL, fam.PHONE, fam.CATEGORY, fam.DATE, fam.AMOUNT, fam.QUANTITY,
    fam.CODE, fam.DIGITS, fam.REFERENCE, fam.PRINTED, fam.COUNTRY,
)  # fmt: skip


def odd_layout() -> fam.Family:
    """Every kind, each with a missing rate, under names the built-in families do not use."""
    cols = [fam.Column("record_id", fam.KEY), fam.Column("customer_id", fam.REF, missing_rate=0.3)]
    for k, kind in enumerate(KINDS):
        extra: dict[str, Any] = {"missing_rate": 0.05 * (1 + k % 4)}
        if kind == fam.CATEGORY:
            extra |= {"categories": ("a", "bb", "ccc", "dddd"), "standing_aliases": {"Bee": "bb"}}
        if kind == fam.DIGITS:
            extra |= {"width": 7}
        if kind == fam.QUANTITY:
            extra |= {"zero_rate": 0.5}
        cols.append(fam.Column(f"c{k}_{kind}", kind, **extra))
    cols.append(fam.Column("amount", fam.AMOUNT, missing_rate=0.5))
    cols.append(fam.Column("quantity", fam.QUANTITY))
    cols.append(fam.Column("qty_other", fam.QUANTITY))
    cols.append(fam.Column("currency", fam.CODE))
    cols.append(fam.Column("product", fam.NAME))
    cols.append(fam.Column("name", fam.NAME, missing_rate=0.5))
    cols.append(fam.Column("email", fam.EMAIL))
    cols.append(fam.Column("notes", fam.NOTES, missing_rate=0.2))
    return fam.Family("odd", "odd export", tuple(cols))


def orders_like() -> fam.Family:
    """A module's copy of orders: its customer ids are drawn from a pool (family id differs)."""
    return replace(fam.ORDERS, id="orders-copy")


def table_rows(t: Table) -> list[list[Any]]:
    return t.rows()


def world_digest(w: CleaningTask) -> str:
    body = [
        w.family.id,
        list(w.truth.columns),
        table_rows(w.truth),
        list(w.dirty.columns),
        table_rows(w.dirty),
        sorted(w.task_aliases.items()),
        {c: sorted(a.items()) for c, a in sorted(w.column_aliases.items())},
        w.date_order,
        w.policy_text,
    ]
    return hashlib.sha256(json.dumps(body, ensure_ascii=False).encode()).hexdigest()


def score_digest(w: CleaningTask) -> str:
    """Scores of a few submissions: the careful program's output, the dirty table unchanged,
    a table with rows dropped and duplicated, and no table at all."""
    policy = read_policy(w.policy_text)
    oracle = careful_program(policy, batch_aliases=True, month_first=policy.month_first)
    protected = frozenset(fam.PROTECTED_COLUMNS) & set(w.family.names)
    schema = Schema(w.family.names, protected, w.family.dedupe_keys)
    program = validate_program(oracle, schema)
    out, _ = run_program(w.dirty, program)
    editable = [c.name for c in w.family.editable]
    rows = w.dirty.rows()
    mangled = Table.from_rows(w.dirty.columns, rows[1::2] + rows[:3] + rows[-2:])
    scores = []
    for after, reason in ((out, ""), (w.dirty, ""), (mangled, ""), (None, "invalid")):
        args = (w.truth, w.dirty, after, fam.PRIMARY_KEY, editable, len(program), reason)
        score = grade(*args, w.arrived_right)  # as an episode scores: the task's own masks
        if score != grade(*args):  # the masks worked out from the tables: the same score
            raise AssertionError(f"{w.family.id}: the task's arrived_right moved a score")
        scores.append(score)
    body = [[s.reward, s.components, s.metrics] for s in scores]
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def cases(big: bool = False) -> list[tuple[str, int, DatacleanConfig, tuple[fam.Family, ...]]]:
    out = []
    extra = (odd_layout(), orders_like())
    sizes: list[int | None] = [None, 1, 2, 3, 7, 60, 1000]
    if big:
        sizes += [20_000, 100_000]
    for split in ("eval", "train"):
        for index in range(3 if not big else 1):
            seed = task_seed("dataclean", split, index)
            for family in ("crm", "orders", "inventory", "all", "odd", "orders-copy"):
                for rows in sizes:
                    if big and rows is not None and rows < 20_000:
                        continue
                    config = DatacleanConfig(family=family, rows=rows)  # type: ignore[arg-type]
                    name = f"{split}[{index}] {family} rows={rows}"
                    out.append((name, seed, config, extra))
    return out


def main(argv: list[str]) -> None:
    big = "--big" in argv
    for name, seed, config, extra in cases(big):
        w = generate(seed, config, extra)
        print(f"{name}\tworld {world_digest(w)}\tscore {score_digest(w)}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
