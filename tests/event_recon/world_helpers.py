"""Shared helpers for event-recon's world-side tests: a small sample of real public tasks."""

from __future__ import annotations

from functools import cache

from datagauntlet.envs.event_recon.gates.world_checks import world_of
from datagauntlet.envs.event_recon.splits import TaskRecord, public_tasks
from datagauntlet.envs.event_recon.world.records import World

# Two tasks of each tier; `make gates` sweeps all 120.
SAMPLE_INDICES = (0, 17, 30, 47, 60, 77, 90, 107)


def sample_records() -> list[TaskRecord]:
    records = public_tasks()
    return [records[i] for i in SAMPLE_INDICES]


@cache
def sample_world(index: int) -> World:
    return world_of(public_tasks()[index])
