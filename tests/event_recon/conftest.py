"""Fixtures event-recon's test files share (tests/shared_results.py builds each once a run)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from datagauntlet.envs.event_recon.gates.world_checks import world_of
from datagauntlet.envs.event_recon.splits import public_tasks
from datagauntlet.envs.event_recon.world.records import World


def _build_public_worlds() -> tuple[World, ...]:
    return tuple(world_of(r) for r in public_tasks())


@pytest.fixture(scope="session")
def public_worlds(shared_result: Callable[[str, Callable[[], Any]], Any]) -> tuple[World, ...]:
    """All 120 public worlds, in `public_tasks()` order: built once for every file that reads
    them all (coverage, canary, explain), not once per file."""
    worlds: tuple[World, ...] = shared_result("event-recon-public-worlds", _build_public_worlds)
    return worlds
