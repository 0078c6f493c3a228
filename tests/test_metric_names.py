"""Every score names exactly the metrics its env declares, whether or not anything was done:
a grader that misspells a metric on one path (no submission, say) is caught here."""

from __future__ import annotations

import pytest

import datagauntlet as dg


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_metric_keys_are_the_declared_ones_on_every_path(env_id: str) -> None:
    env = dg.make(env_id)
    declared = set(env.metric_names)
    assert declared, f"{env_id} declares its metric names"
    task = env.tasks("eval", 1)[0]
    idle = env.episode(task)
    try:
        assert set(idle.score().metrics) == declared  # nothing done
    finally:
        idle.close()
    played = env.episode(task)
    try:
        env.policies()[env.reference](played)
        assert set(played.score().metrics) == declared
    finally:
        played.close()
