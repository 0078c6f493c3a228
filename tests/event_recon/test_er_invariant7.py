"""Invariant 7 holds against every workspace-only policy we ship, judged per task.

The generator counts a task's broken partners that the contract-free repairs finish
(`bookkeeping.bookkeeping_projection`) and refuses a plan where they are more than
`MAX_REPAIRABLE_SHARE` of them. That bound is only as good as the simulation: a shipped policy
that repairs a partner the simulation does not would finish tasks the invariant says it cannot.
So each shipped policy, played on real tasks, may repair only partners the world lists as
repairable without the contract, and so never more than the share.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.envs.event_recon.attacks import attackers
from datagauntlet.envs.event_recon.grading.grader import same
from datagauntlet.envs.event_recon.world.plan import MAX_REPAIRABLE_SHARE

# Public tasks where the rate-scaling attack repaired partners before the simulation knew it
# (1 it solved outright), and one of each tier besides.
TASKS = (1, 34, 42, 72, 90, 0, 45, 105)


@cache
def env() -> dg.Environment:
    return dg.make("event-recon")


def repaired(policy: Any, index: int) -> tuple[set[str], set[str], set[str]]:
    """(partners the policy repaired, the world's repairable ones, its broken ones)."""
    task = env().tasks("public")[index]
    world = env().world(task)  # type: ignore[attr-defined]
    truth = env().episode_truth(task)  # type: ignore[attr-defined]
    ep = env().episode(task)
    try:
        policy(ep)
        outcome = ep.outcome()  # type: ignore[attr-defined]
    finally:
        ep.close()
    broken = set(truth.broken)
    projection = outcome.projection if outcome is not None else None
    fixed = {p for p in broken if projection is not None and same(projection, truth.correct, p)}
    return fixed, set(world.notes["repairable_without_contract"]), broken


@pytest.mark.parametrize("name", sorted(attackers.policies()))
@pytest.mark.parametrize("index", TASKS)
def test_a_shipped_workspace_only_policy_repairs_only_what_invariant_7_counted(
    name: str, index: int
) -> None:
    fixed, repairable, broken = repaired(attackers.policies()[name], index)
    assert fixed <= repairable, (name, index, sorted(fixed - repairable))
    assert len(fixed) <= MAX_REPAIRABLE_SHARE * len(broken) < len(broken)
