"""Every table the README shows between generated-table markers is the code's current output."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

import datagauntlet as dg
from datagauntlet.core.report import components_table, markdown_table
from datagauntlet.core.runner import CalibrationRow, calibrate

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
BLOCK = re.compile(r"<!-- (calibration|components):(\S+?) -->\n(.*?)\n<!-- /\1:\2 -->", re.S)


@cache
def _rows(env_id: str) -> tuple[CalibrationRow, ...]:
    return tuple(calibrate(dg.make(env_id)))


def _blocks() -> list[tuple[str, str, str]]:
    return [(m[1], m[2], m[3]) for m in BLOCK.finditer(README)]


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_every_env_has_a_calibration_table(env_id: str) -> None:
    assert f"<!-- calibration:{env_id} -->" in README


@pytest.mark.parametrize(
    ("kind", "key", "table"), _blocks(), ids=[f"{k}:{e}" for k, e, _ in _blocks()]
)
def test_readme_table_matches_code(kind: str, key: str, table: str) -> None:
    if kind == "calibration":
        assert table == markdown_table(_rows(key))
    else:
        env_id, _, label = key.partition(":")
        config = dict(pair.split("=", 1) for pair in label.split(","))
        assert table == components_table(_rows(env_id), config)
