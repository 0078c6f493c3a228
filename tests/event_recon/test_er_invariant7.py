"""Invariant 7 holds against every workspace-only policy we ship, judged per task.

The generator counts a task's broken partners that the contract-free repairs finish
(`bookkeeping.bookkeeping_projection`) and refuses a plan where they are more than
`MAX_REPAIRABLE_SHARE` of them. That bound is only as good as the simulation: a shipped policy
that repairs a partner the simulation does not would finish tasks the invariant says it cannot.
So each shipped policy, played on real tasks, may repair only partners the world lists as
repairable without the contract, and so never more than the share. The fixed script of
`cheap_attacks.py` is one of them: it never reads the contract either.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.envs.event_recon.attacks import attackers, cheap_attacks
from datagauntlet.envs.event_recon.grading.grader import same
from datagauntlet.envs.event_recon.world.plan import MAX_REPAIRABLE_SHARE

# Public tasks where the rate-scaling attack repaired partners before the simulation knew it
# (1 it solved outright), and one of each tier besides.
TASKS = (1, 34, 42, 72, 90, 0, 45, 105)


def contract_free_policies() -> dict[str, Any]:
    return {**attackers.policies(), "fixed_script": cheap_attacks.fixed_script}


@cache
def env() -> dg.Environment:
    return dg.make("event-recon")


def repaired(policy: Any, index: int, split: str = "public") -> tuple[set[str], set[str], set[str]]:
    """(partners the policy repaired, the world's repairable ones, its broken ones)."""
    task = env().make_task(split, index)
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


@pytest.mark.parametrize("name", sorted(contract_free_policies()))
@pytest.mark.parametrize("index", TASKS)
def test_a_shipped_workspace_only_policy_repairs_only_what_invariant_7_counted(
    name: str, index: int
) -> None:
    fixed, repairable, broken = repaired(contract_free_policies()[name], index)
    assert fixed <= repairable, (name, index, sorted(fixed - repairable))
    assert len(fixed) <= MAX_REPAIRABLE_SHARE * len(broken) < len(broken)


def test_the_fixed_script_finishes_a_lone_duplicate_and_nothing_invariant_7_did_not_count() -> None:
    # train-00167 (tier 4): one of its four broken partners has a duplicate delivery and no
    # other defect, and the blind dedupe finishes it: 0.15, the most invariant 7 leaves a
    # contract-free script (no public task has such a partner; a private one did).
    fixed, repairable, broken = repaired(cheap_attacks.fixed_script, 167, "train")
    assert fixed and fixed <= repairable, (sorted(fixed), sorted(repairable))
    assert len(fixed) <= MAX_REPAIRABLE_SHARE * len(broken)
    task = env().make_task("train", 167)
    ep = env().episode(task)
    try:
        cheap_attacks.fixed_script(ep)
        reward = ep.score().reward
    finally:
        ep.close()
    assert reward == pytest.approx(cheap_attacks.CONTRACT_FREE_VALUE)
