"""Nothing in a workspace holds the answer; the canary is on every record and in no file;
workspaces are byte-identical across processes and PYTHONHASHSEED values."""

from __future__ import annotations

import dataclasses

import pytest
from world_helpers import SAMPLE_INDICES, sample_world

from datagauntlet.envs.event_recon.gates.world_checks import (
    digests,
    digests_in_subprocess,
    leak_findings,
    workspace_digest,
)
from datagauntlet.envs.event_recon.splits import CANARY, PER_TIER, public_tasks
from datagauntlet.envs.event_recon.world.records import World


def test_public_split_is_120_tasks_30_per_tier_each_with_the_canary() -> None:
    records = public_tasks()
    assert len(records) == 120
    assert [sum(r.tier == t for r in records) for t in (1, 2, 3, 4)] == [PER_TIER] * 4
    assert all(r.canary == CANARY and CANARY.startswith("event-recon-canary:") for r in records)
    assert len({r.seed for r in records}) == 120


@pytest.mark.parametrize("index", SAMPLE_INDICES)
def test_no_leak_and_no_canary_in_the_workspace(index: int) -> None:
    assert leak_findings(sample_world(index)) == []


def _with_file(world: World, name: str, data: bytes) -> World:
    return dataclasses.replace(world, files={**world.files, name: data})


def test_the_scans_find_planted_leaks() -> None:
    """Each scan fails when its kind of leak is planted (so a clean result means something)."""
    world = sample_world(SAMPLE_INDICES[4])
    canary = _with_file(world, "INTEGRATION.md", world.files["INTEGRATION.md"] + CANARY.encode())
    assert any("canary" in f for f in leak_findings(canary))
    named = world.manifest[0]
    line = f"\n{named.family} hit {named.partner_id}\n".encode()
    statement = _with_file(
        world, "partner_statement.csv", world.files["partner_statement.csv"] + line
    )
    assert any(named.family in f for f in leak_findings(statement))
    assert any(
        "manifest partner" in f
        for f in leak_findings(
            _with_file(world, "INTEGRATION.md", world.files["INTEGRATION.md"] + line)
        )
    )
    lines = world.files["webhooks.jsonl"].decode().splitlines()
    forged = lines[0].replace('"signature": "sha256=', '"signature": "sha256=0', 1)
    wire = _with_file(world, "webhooks.jsonl", ("\n".join([forged, *lines[1:]]) + "\n").encode())
    assert any("signature" in f for f in leak_findings(wire))


def test_workspaces_identical_across_processes_and_hash_seeds() -> None:
    here = digests(SAMPLE_INDICES)
    assert here == [workspace_digest(sample_world(i)) for i in SAMPLE_INDICES]
    for hashseed in ("0", "12345"):
        assert digests_in_subprocess(SAMPLE_INDICES[::2], hashseed) == here[::2]
