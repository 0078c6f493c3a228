"""Shared helpers for the bad-batch-gate tests (a unique module name: no conftest clashes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import datagauntlet as dg
from datagauntlet.core.episode import Task
from datagauntlet.envs.bad_batch_gate.env import BadBatchGateEnv
from datagauntlet.envs.bad_batch_gate.episode import BadBatchGateEpisode

REPO = Path(__file__).resolve().parents[2]
FIXTURE_NAME = Path("fixtures") / "bad-batch-gate" / "eval_curated.jsonl"


def fixture_path() -> Path | None:
    """The original's 32 eval cases: $DATAGAUNTLET_SHARED, else ../shared next to the repo."""
    roots = []
    if os.environ.get("DATAGAUNTLET_SHARED"):
        roots.append(Path(os.environ["DATAGAUNTLET_SHARED"]))
    roots.append(REPO / ".." / "shared")
    for root in roots:
        path = (root / FIXTURE_NAME).resolve()
        if path.is_file():
            return path
    return None


def fixture_env() -> BadBatchGateEnv:
    path = fixture_path()
    if path is None:
        pytest.skip(
            "the original's fixture is absent: put eval_curated.jsonl under "
            "$DATAGAUNTLET_SHARED/fixtures/bad-batch-gate/ or ../shared/fixtures/bad-batch-gate/"
        )
    env = dg.make("bad-batch-gate", cases=str(path))
    assert isinstance(env, BadBatchGateEnv)
    return env


def generated_env(families: str = "standard") -> BadBatchGateEnv:
    env = dg.make("bad-batch-gate", families=families)
    assert isinstance(env, BadBatchGateEnv)
    return env


def episode_of(
    env: BadBatchGateEnv, family: str, variant: int | None = None, split: str = "eval"
) -> BadBatchGateEpisode:
    """A fresh episode of the first task of `family` (and `variant`) in a split."""
    for task in env.tasks(split):
        case = env.case(task)
        if case.family == family and (variant is None or case.variant == variant):
            return env.episode(task)
    raise LookupError(f"no {family}/{variant} task in {split}")


def task_of(env: BadBatchGateEnv, family: str, variant: int | None = None) -> Task:
    ep = episode_of(env, family, variant)
    ep.world.close()
    return ep.task
