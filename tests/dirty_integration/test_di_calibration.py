"""The difficulty curve lands where the issue asks, 60 eval seeds per cell."""

from __future__ import annotations

import datagauntlet as dg
from datagauntlet.core.runner import calibrate

BANDS = {
    ("clean", "naive"): (1.0, 1.0),
    ("clean", "stubborn"): (1.0, 1.0),
    ("clean", "careful"): (1.0, 1.0),
    ("realistic", "naive"): (0.45, 0.70),
    ("realistic", "stubborn"): (0.95, 1.0),
    ("realistic", "careful"): (1.0, 1.0),
    ("hostile", "naive"): (0.25, 0.50),
    ("hostile", "stubborn"): (0.80, 0.97),
    ("hostile", "careful"): (1.0, 1.0),
}


def test_calibration_bands() -> None:
    rows = calibrate(dg.make("dirty-integration"), 60)
    got = {(r.config["profile"], r.policy): r.mean_reward for r in rows}
    assert set(got) == set(BANDS)
    for cell, (lo, hi) in BANDS.items():
        assert lo <= got[cell] <= hi, (cell, got[cell])


def test_budget_discipline_is_load_bearing_on_hostile() -> None:
    rows = calibrate(dg.make("dirty-integration"), 60, policies=["stubborn"])
    hostile = next(r for r in rows if r.config == {"profile": "hostile"})
    assert hostile.components["completeness"] > 0.95
    assert hostile.components["budget_discipline"] < 0.8
