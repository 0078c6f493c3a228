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
# Probes: one right page, padded guesses, nothing at all; the same on every profile.
for _profile in ("clean", "realistic", "hostile"):
    BANDS[_profile, "first-page-only"] = (0.25, 0.30)
    BANDS[_profile, "invent-ids"] = (0.0, 0.10)
    BANDS[_profile, "empty-submit"] = (0.0, 0.0)


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


def test_page_fault_table_matches_the_profiles() -> None:
    import re
    from pathlib import Path

    from datagauntlet.envs.dirty_integration.config import PROFILES

    page = (Path(__file__).resolve().parents[2] / "docs/envs/dirty-integration.md").read_text()

    def shown(rate: float) -> str:
        return "every response" if rate == 1.0 else f"{round(rate * 100)}%"

    rows = {
        "cursor repeat": "cursor_repeat",
        "inflated total": "inflate_total",
        "type drift": "type_drift",
        "timeout": "timeout",
    }
    for label, field in rows.items():
        line = re.search(rf"^\| {label} \|.*$", page, re.M)
        assert line, label
        cells = [c.strip() for c in line[0].strip("|").split("|")]
        expected = [shown(getattr(PROFILES[p], field)) for p in ("realistic", "hostile")]
        assert cells[-2:] == expected, (label, cells)
    quota = re.search(r"^\| quota \|.*$", page, re.M)
    assert quota
    factors = [f"{PROFILES[p].quota_factor:.1f} x pages" for p in ("realistic", "hostile")]
    assert [c.strip() for c in quota[0].strip("|").split("|")][-2:] == factors
    assert PROFILES["clean"].quota_factor is None


def test_page_probe_figure_matches() -> None:
    from pathlib import Path

    rows = calibrate(
        dg.make("dirty-integration", profile="realistic"), 60, policies=["first-page-only"]
    )
    text = (Path(__file__).resolve().parents[2] / "docs/envs/dirty-integration.md").read_text()
    assert f"so it sits at {rows[0].mean_reward:.2f}." in text
