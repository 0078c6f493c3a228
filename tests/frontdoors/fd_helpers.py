"""Helpers shared by the front-door tests (a unique name, so no other test folder shadows it)."""

from __future__ import annotations

import datagauntlet as dg
from datagauntlet.core.env import policy_sees_truth


def replayable_pairs() -> list[tuple[str, str]]:
    """(env id, policy) for every registered env and every policy a model could stand in for."""
    pairs = []
    for env_id in dg.list_envs():
        for name, policy in dg.make(env_id).policies().items():
            if not policy_sees_truth(policy):
                pairs.append((env_id, name))
    return pairs
