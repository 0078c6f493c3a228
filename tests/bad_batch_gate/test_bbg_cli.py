"""The CLI front door: `list` shows the env, `calibrate --env bad-batch-gate` prints both cells."""

from __future__ import annotations

import json

import pytest
from bbg_helpers import fixture_env

from datagauntlet.cli.main import main


def test_list_shows_the_env(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "bad-batch-gate" in out and "quarantine_batch" in out


def test_calibrate_prints_both_cells(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--env", "bad-batch-gate", "--seeds", "2", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "families=standard" in out and "families=extended" in out
    # twelve policies: the table is turned, one line per policy
    lines = {line.split(" | ")[0].strip("| "): line for line in out.splitlines()}
    for policy in ("naive", "careful", "refuse-all", "report-liar", "profile-only"):
        assert policy in lines
    assert lines["careful"].split(" | ")[1:] == ["1.00", "1.00 |"]


def test_calibrate_plays_the_original_cases_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = fixture_env().config.cases
    args = ["calibrate", "--env", "bad-batch-gate", f"cases={path}", "--json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    means = {row["policy"]: row["mean_reward"] for row in doc["rows"]}
    assert (means["naive"], means["careful"], means["refuse-all"]) == (0.534375, 1.0, 0.3875)
