"""Every table README.md and docs/ show between generated-table markers is the code's output.

Three kinds of block, one test: `calibration:ENV` (the calibration table of an env),
`components:ENV:CONFIG` (where its reward is lost under one config), and `table:ENV:NAME` (a
table the env builds with `core/report.py`, named in its `report_tables`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core.report import components_table, markdown_table
from datagauntlet.core.runner import CalibrationRow, calibrate

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
CALIBRATION = (ROOT / "docs" / "calibration.md").read_text()
# the names tests/dataclean/test_dataclean_calibration.py and tests/bad_batch_gate/
# test_bbg_generated.py share these results under
DC_ROWS, BBG_PLAYED = "dataclean-calibration-rows", "bbg-generated-played"
BLOCK = re.compile(r"<!-- (calibration|components|table):(\S+?) -->\n(.*?)\n?<!-- /\1:\2 -->", re.S)


@pytest.fixture(scope="module", autouse=True)
def _plays_shared(shared_result: Callable[..., Any]) -> Iterator[None]:
    """The env tables played from the same results their own test files check (dataclean's
    calibration rows, bad-batch-gate's generated splits): computed once a run, not twice."""
    from datagauntlet.envs.bad_batch_gate import tables as bbg_tables
    from datagauntlet.envs.dataclean import report as dc_report

    dc_rows, bbg_played = dc_report.calibration_rows, bbg_tables.generated_played
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dc_report, "calibration_rows", lambda: shared_result(DC_ROWS, dc_rows))
        mp.setattr(bbg_tables, "generated_played", lambda: shared_result(BBG_PLAYED, bbg_played))
        yield


@cache
def _rows(env_id: str) -> tuple[CalibrationRow, ...]:
    return tuple(calibrate(dg.make(env_id)))


@cache
def _env_tables(env_id: str) -> dict[str, object]:
    return dict(dg.make(env_id).report_tables())


def _env_page(env_id: str) -> str:
    return (ROOT / "docs" / "envs" / f"{env_id}.md").read_text()


def _blocks() -> list[tuple[str, str, str]]:
    return [(m[1], m[2], m[3]) for page in PAGES for m in BLOCK.finditer(page.read_text())]


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_every_env_has_a_calibration_table(env_id: str) -> None:
    assert f"<!-- calibration:{env_id} -->" in CALIBRATION


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_every_table_an_env_supplies_is_on_its_page(env_id: str) -> None:
    for name in _env_tables(env_id):
        assert f"<!-- table:{env_id}:{name} -->" in _env_page(env_id)


@pytest.mark.parametrize(
    ("kind", "key", "table"), _blocks(), ids=[f"{k}:{e}" for k, e, _ in _blocks()]
)
def test_readme_table_matches_code(kind: str, key: str, table: str) -> None:
    if kind == "calibration":
        assert table == markdown_table(_rows(key))
    elif kind == "components":
        env_id, _, label = key.partition(":")
        config = dict(pair.split("=", 1) for pair in label.split(","))
        assert table == components_table(_rows(env_id), config)
    else:
        env_id, _, name = key.partition(":")
        build = _env_tables(env_id)[name]
        assert table == build(), f"docs table {key} is stale; regenerate it"  # type: ignore[operator]
