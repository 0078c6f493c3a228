"""`scale`: worlds at the original's size by default, so a tier-4 delivery stream needs paging
and generation stays cheap; any other scale is validated and gives another world."""

from __future__ import annotations

import sqlite3

import pytest
from world_helpers import sample_world

from datagauntlet.envs.event_recon.config import EventReconConfig
from datagauntlet.envs.event_recon.env import EventReconEnv
from datagauntlet.envs.event_recon.world.base_world import (
    DEFAULT_SCALE,
    PARTNERS_BY_TIER,
    base_draft,
    roster_bounds,
)
from datagauntlet.envs.event_recon.world.generator import generate
from datagauntlet.envs.event_recon.world.records import World


@pytest.mark.parametrize("bad", [0.0, 0.1, 4.5, -1.0])
def test_scale_out_of_range_is_refused_with_one_line(bad: float) -> None:
    with pytest.raises(ValueError, match=r"^scale must be in 0.25..4, got"):
        EventReconConfig(scale=bad).validate()
    with pytest.raises(ValueError, match="scale must be in"):
        base_draft(1, 1, 0, bad)


def test_default_scale_is_the_originals_size() -> None:
    assert EventReconConfig().scale == DEFAULT_SCALE == 1.0
    assert roster_bounds(4, DEFAULT_SCALE) == PARTNERS_BY_TIER[4]
    limit = EventReconConfig().read_bytes_limit
    for index in (90, 107):  # tier 4: the stream is more than one read_file page, by far
        world = sample_world(index)
        assert len(world.files["webhooks.jsonl"]) > 1.5 * limit
        lo, hi = PARTNERS_BY_TIER[4]
        survivors = [p for p in world.partner_ids if p not in _merged(world)]
        assert lo <= len(survivors) <= hi


def _merged(world: World) -> set[str]:
    conn = sqlite3.connect(":memory:")
    conn.deserialize(world.files["db.sqlite"])
    rows = conn.execute("SELECT partner_id FROM partners WHERE merged_into IS NOT NULL")
    return {r[0] for r in rows}


def test_a_smaller_scale_is_a_smaller_world_of_the_same_seed() -> None:
    big, small = generate(5, 3), generate(5, 3, scale=0.5)
    assert len(small.partner_ids) < len(big.partner_ids)
    assert len(small.files["webhooks.jsonl"]) < len(big.files["webhooks.jsonl"])
    lo, hi = roster_bounds(3, 0.5)
    assert lo <= len([p for p in small.partner_ids if p not in _merged(small)]) <= hi


def test_the_env_builds_worlds_at_its_configured_scale() -> None:
    small = EventReconEnv.from_kwargs(scale=0.5)
    default = EventReconEnv()
    task = default.tasks("public", n=1)[0]
    assert len(small.world(task).partner_ids) < len(default.world(task).partner_ids)
    with pytest.raises(ValueError, match="scale must be in"):
        EventReconEnv.from_kwargs(scale=9.0)
