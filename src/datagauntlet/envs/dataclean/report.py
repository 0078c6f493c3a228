"""dataclean's docs tables: its columns over `core/report.py`'s layout, per split and family.

`python -m datagauntlet.envs.dataclean.report` prints them; tests/test_readme_tables.py pins the
blocks of docs/envs/dataclean.md to them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from datagauntlet.core.report import Column, grid, group_table
from datagauntlet.core.runner import CalibrationRow, calibrate
from datagauntlet.core.seeding import SPLITS
from datagauntlet.envs.dataclean.env import DatacleanEnv
from datagauntlet.envs.dataclean.grading.grader import WEIGHTS

TASKS_PER_CELL = 40


def calibration_rows(n: int = TASKS_PER_CELL) -> dict[str, list[CalibrationRow]]:
    env = DatacleanEnv()
    return {split: calibrate(env, n, split) for split in SPLITS}


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def reward_table(rows: dict[str, list[CalibrationRow]]) -> str:
    policies = list(dict.fromkeys(r.policy for rs in rows.values() for r in rs))
    lines = []
    for split, rs in rows.items():
        for family in dict.fromkeys(str(r.config["family"]) for r in rs):
            cells = {r.policy: r.mean_reward for r in rs if r.config["family"] == family}
            lines.append(((split, family), [f"{cells[p]:.2f}" for p in policies]))
    return grid(["split", "family"], policies, lines)


def _mean_of(value: Callable[[CalibrationRow], float], digits: int) -> Column[CalibrationRow]:
    def cell(rs: Sequence[CalibrationRow]) -> str:
        return f"{mean([value(r) for r in rs]):.{digits}f}"

    return Column("", cell)


def component_table(rows: dict[str, list[CalibrationRow]]) -> str:
    """Each policy's components and damage, averaged over every split and family."""
    by_policy: dict[str, list[CalibrationRow]] = {}
    for rs in rows.values():
        for r in rs:
            by_policy.setdefault(r.policy, []).append(r)

    def column(header: str, value: Callable[[CalibrationRow], float], digits: int = 2) -> Column:
        return Column(header, _mean_of(value, digits).cell)

    columns = [column("reward", lambda r: r.mean_reward)]
    columns += [column(k, lambda r, k=k: r.components[k]) for k in WEIGHTS]
    columns += [
        column("cells damaged", lambda r: r.metrics["cells_damaged"], 1),
        column("rows missing", lambda r: r.metrics["rows_missing"], 1),
    ]
    return group_table("policy", list(by_policy.items()), columns)


def tables(n: int = TASKS_PER_CELL) -> str:
    rows = calibration_rows(n)
    return f"{reward_table(rows)}\n\n{component_table(rows)}"


def report_tables() -> dict[str, Callable[[], str]]:
    """The docs page's tables by name, for `DatacleanEnv.report_tables` (played once)."""
    memo: dict[str, dict[str, list[CalibrationRow]]] = {}

    def rows() -> dict[str, list[CalibrationRow]]:
        if "rows" not in memo:
            memo["rows"] = calibration_rows()
        return memo["rows"]

    return {
        "rewards": lambda: reward_table(rows()),
        "components": lambda: component_table(rows()),
    }


if __name__ == "__main__":
    print(tables())
