"""Every family is drawn on the public split in at least 15 tasks and on every tier its shape
allows; the family x tier table docs/envs/event-recon.md publishes is the one the code gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from datagauntlet.envs.event_recon.gates.coverage import (
    MIN_TASKS,
    OFF_TIER,
    coverage,
    coverage_problems,
    render,
)
from datagauntlet.envs.event_recon.splits import public_tasks
from datagauntlet.envs.event_recon.world.records import FAMILIES, TIERS, World

DOCS = Path(__file__).resolve().parents[2] / "docs" / "envs" / "event-recon.md"


@pytest.fixture(scope="module")
def table(public_worlds: tuple[World, ...]) -> dict[str, dict[int, int]]:
    assert len(public_worlds) == len(public_tasks()) == 120
    return coverage(public_worlds)


def test_every_family_on_every_tier_it_can_have(table: dict[str, dict[int, int]]) -> None:
    assert coverage_problems(table) == []
    assert all(sum(table[f].values()) >= MIN_TASKS for f in FAMILIES)


def test_the_docs_table_is_the_codes(table: dict[str, dict[int, int]]) -> None:
    assert render(table) in DOCS.read_text()


def test_every_off_tier_cell_is_explained_in_the_docs() -> None:
    text = " ".join(DOCS.read_text().split())
    for (family, tier), why in OFF_TIER.items():
        assert tier in TIERS and family in FAMILIES
        assert f"`{family}` on T{tier}: {why}" in text, (family, tier)


def test_the_rule_fires_on_a_thin_or_missing_cell() -> None:
    """The checker is not vacuous: a family short of 15 tasks, a tier it can have and never
    gets, and a cell OFF_TIER rules out are each reported."""
    thin = {f: dict.fromkeys(TIERS, 8) for f in FAMILIES}
    for cell in OFF_TIER:
        thin[cell[0]][cell[1]] = 0
    assert coverage_problems(thin) == []
    thin["schema_drift"] = {1: 0, 2: 8, 3: 8, 4: 8}
    thin["gross_net_divergence"] = {1: 1, 2: 1, 3: 1, 4: 1}
    thin["timezone_boundary"][1] = 1
    problems = coverage_problems(thin)
    assert "schema_drift never drawn on T1" in problems
    assert "gross_net_divergence: 4 tasks < 15" in problems
    assert any("timezone_boundary drawn on T1" in p for p in problems)
