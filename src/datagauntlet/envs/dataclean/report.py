"""The README's calibration tables: every built-in policy per split and family.

`python -m datagauntlet.envs.dataclean.report` prints them; a test pins the README to them.
"""

from __future__ import annotations

from datagauntlet.core.runner import CalibrationRow, calibrate
from datagauntlet.core.seeding import SPLITS
from datagauntlet.envs.dataclean.env import DatacleanEnv
from datagauntlet.envs.dataclean.grader import WEIGHTS

TASKS_PER_CELL = 40


def calibration_rows(n: int = TASKS_PER_CELL) -> dict[str, list[CalibrationRow]]:
    env = DatacleanEnv()
    return {split: calibrate(env, n, split) for split in SPLITS}


def reward_table(rows: dict[str, list[CalibrationRow]]) -> str:
    policies = list(dict.fromkeys(r.policy for rs in rows.values() for r in rs))
    lines = [
        "| split | family | " + " | ".join(policies) + " |",
        "|---|---|" + "---:|" * len(policies),
    ]
    for split, rs in rows.items():
        for family in dict.fromkeys(str(r.config["family"]) for r in rs):
            cells = {r.policy: r.mean_reward for r in rs if r.config["family"] == family}
            values = " | ".join(f"{cells[p]:.2f}" for p in policies)
            lines.append(f"| {split} | {family} | {values} |")
    return "\n".join(lines)


def component_table(rows: dict[str, list[CalibrationRow]]) -> str:
    """Each policy's components and damage, averaged over every split and family."""
    by_policy: dict[str, list[CalibrationRow]] = {}
    for rs in rows.values():
        for r in rs:
            by_policy.setdefault(r.policy, []).append(r)
    names = list(WEIGHTS)
    lines = [
        "| policy | reward | " + " | ".join(names) + " | cells damaged | rows missing |",
        "|---|---:|" + "---:|" * (len(names) + 2),
    ]
    for policy, rs in by_policy.items():

        def mean(values: list[float]) -> float:
            return sum(values) / len(values)

        comps = " | ".join(f"{mean([r.components[k] for r in rs]):.2f}" for k in names)
        damaged = mean([r.metrics["cells_damaged"] for r in rs])
        missing = mean([r.metrics["rows_missing"] for r in rs])
        reward = mean([r.mean_reward for r in rs])
        lines.append(f"| {policy} | {reward:.2f} | {comps} | {damaged:.1f} | {missing:.1f} |")
    return "\n".join(lines)


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def tables(n: int = TASKS_PER_CELL) -> str:
    rows = calibration_rows(n)
    return f"{reward_table(rows)}\n\n{component_table(rows)}"


if __name__ == "__main__":
    print(tables())
