"""Calibration: the oracle solves every task, the baselines land where the docs page says.

The page's tables are this code's output, pinned here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.cli.main import main
from datagauntlet.core.runner import CalibrationRow, play
from datagauntlet.envs.dataclean.report import (
    calibration_rows,
)
from datagauntlet.envs.dataclean.tool import program

PAGE = Path(__file__).resolve().parents[2] / "docs" / "envs" / "dataclean.md"


@pytest.fixture(scope="module")
def rows(shared_result: Callable[..., Any]) -> dict[str, list[CalibrationRow]]:
    # the same rows the docs tables are built from (tests/test_readme_tables.py): played once
    played: dict[str, list[CalibrationRow]] = shared_result(
        "dataclean-calibration-rows", calibration_rows
    )
    return played


def section() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_oracle_is_perfect_noop_near_point_four_generic_capped(
    rows: dict[str, list[CalibrationRow]],
) -> None:
    for split, cells in rows.items():
        by = {(r.config["family"], r.policy): r for r in cells}
        for family in ("crm", "orders", "inventory"):
            where = f"{split}/{family}"
            assert by[family, "oracle"].min_reward == 1.0, where
            assert 0.35 <= by[family, "noop"].mean_reward <= 0.45, where
            generic, overeager = by[family, "generic"], by[family, "overeager"]
            assert generic.mean_reward <= 0.85, where
            assert overeager.components["preservation"] < generic.components["preservation"]


@pytest.mark.parametrize(
    "config",
    [{"family": "all"}, {"family": "crm", "rows": 400}, {"previews": 3}],
    ids=["all-families", "400-rows", "previews"],
)
def test_oracle_scores_one_on_every_task(config: dict[str, object]) -> None:
    env = dg.make("dataclean", **config)
    n = 150 if "rows" not in config else 6
    for split in ("train", "eval", "test"):
        for task in env.tasks(split, n):
            assert play(env, "oracle", task).reward == 1.0, (split, task.id)


def test_page_numbers_match_the_code() -> None:
    from test_dataclean_security import BATTERY

    text = section()
    assert f"throws {len(BATTERY)} hostile programs" in text
    assert f"Limits: {program.MAX_OPERATIONS} operations;" in text
    assert f"; {program.MAX_MAP_ENTRIES} map entries;" in text
    assert f"; {program.MAX_TEXT} per map key, map value or token;" in text


def test_calibrate_cli_prints_the_dataclean_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--env", "dataclean", "--seeds", "3", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "### dataclean" in out and "family=orders" in out
    assert "| policy | family=crm | family=orders | family=inventory |" in out
    assert "| oracle | 1.00 | 1.00 | 1.00 |" in out


def test_page_before_after_figures_are_the_component_table(
    rows: dict[str, list[CalibrationRow]],
) -> None:
    text = section()
    by_policy: dict[str, list[float]] = {}
    for rs in rows.values():
        for r in rs:
            by_policy.setdefault(r.policy, []).append(r.mean_reward)
    for name in ("generic", "blind-plan", "everything-everywhere"):
        mean = sum(by_policy[name]) / len(by_policy[name])
        assert f"<!-- dc:{name} -->{mean:.2f} |" in text, name
