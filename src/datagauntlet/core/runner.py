"""Play policies over tasks, in process or across worker processes, in a fixed result order."""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.core.registry import make

Progress = Callable[[int], None]  # called with the number of episodes just finished


@dataclass(frozen=True)
class EpisodeResult:
    env: str
    config: dict[str, Any]
    policy: str
    task: dict[str, Any]
    reward: float
    components: dict[str, float]
    metrics: dict[str, Any] = field(default_factory=dict)
    calls: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "config": self.config,
            "policy": self.policy,
            "task": self.task,
            "reward": self.reward,
            "components": self.components,
            "metrics": self.metrics,
            "calls": self.calls,
        }


def play(env: Environment, policy_name: str, task: Task) -> EpisodeResult:
    policies = env.policies()
    if policy_name not in policies:
        raise ValueError(f"{env.id} has no policy {policy_name!r}; choose from {sorted(policies)}")
    ep = env.episode(task)
    try:
        policies[policy_name](ep)
        score = ep.score()
    finally:
        ep.close()
    return EpisodeResult(
        env.id,
        env.config.as_dict(),
        policy_name,
        task.as_dict(),
        score.reward,
        {k: c["value"] for k, c in score.components.items()},
        score.metrics,
        ep.calls,
    )


# Each worker process builds its env once (per config) and plays jobs sent to it by index.
_WORKER_ENVS: dict[tuple[str, str], Environment] = {}


def _play_job(job: tuple[str, dict[str, Any], str, dict[str, Any]]) -> EpisodeResult:
    env_id, config, policy_name, task = job
    key = (env_id, repr(sorted(config.items())))
    env = _WORKER_ENVS.get(key)
    if env is None:
        env = _WORKER_ENVS[key] = make(env_id, **config)
    return play(env, policy_name, Task(**task))


def run(
    env: Environment,
    policy_names: Sequence[str],
    tasks: Sequence[Task],
    workers: int = 1,
    progress: Progress | None = None,
) -> list[EpisodeResult]:
    """Every (policy, task) pair, ordered by policy then task, whatever the worker count."""
    jobs = [(p, t) for p in policy_names for t in tasks]
    if workers <= 1 or len(jobs) < 2:
        out = []
        for p, t in jobs:
            out.append(play(env, p, t))
            if progress:
                progress(1)
        return out
    payload = [(env.id, env.config.as_dict(), p, t.as_dict()) for p, t in jobs]
    chunk = max(1, len(payload) // (workers * 8))
    results: list[EpisodeResult] = []
    with ProcessPoolExecutor(max_workers=min(workers, os.cpu_count() or 1)) as pool:
        for result in pool.map(_play_job, payload, chunksize=chunk):
            results.append(result)
            if progress:
                progress(1)
    return results


@dataclass(frozen=True)
class CalibrationRow:
    config: dict[str, Any]
    policy: str
    n: int
    mean_reward: float
    min_reward: float
    components: dict[str, float]
    metrics: dict[str, float]

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "policy": self.policy,
            "n": self.n,
            "mean_reward": self.mean_reward,
            "min_reward": self.min_reward,
            "components": self.components,
            "metrics": self.metrics,
        }


def summarize(config: dict[str, Any], results: Iterable[EpisodeResult]) -> list[CalibrationRow]:
    """One row per policy, in first-seen order; numeric metrics are averaged."""
    by_policy: dict[str, list[EpisodeResult]] = {}
    for r in results:
        by_policy.setdefault(r.policy, []).append(r)
    rows = []
    for policy, rs in by_policy.items():
        comps = {k: _mean(r.components[k] for r in rs) for k in rs[0].components}
        numeric = [
            k
            for k, v in rs[0].metrics.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        ]
        metrics = {k: _mean(float(r.metrics[k]) for r in rs) for k in numeric}
        rewards = [r.reward for r in rs]
        rows.append(
            CalibrationRow(config, policy, len(rs), _mean(rewards), min(rewards), comps, metrics)
        )
    return rows


def _mean(values: Iterable[float]) -> float:
    return round(statistics.fmean(values), 6)


def calibrate(
    env: Environment,
    n: int | None = None,
    split: str = "eval",
    workers: int = 1,
    progress: Progress | None = None,
    policies: Sequence[str] | None = None,
    grid: Sequence[dict[str, Any]] | None = None,
) -> list[CalibrationRow]:
    """The env's calibration grid (or `grid`): every config override x every policy over `n`
    tasks."""
    rows: list[CalibrationRow] = []
    for overrides in env.calibration_grid() if grid is None else grid:
        cell_env = env.with_config(**overrides) if overrides else env
        names = list(policies or cell_env.policies())
        tasks = cell_env.tasks(split, n)
        results = run(cell_env, names, tasks, workers, progress)
        rows.extend(summarize(cell_env.config.changed() or overrides, results))
    return rows


def narrowed_grid(
    env: Environment, fixed: Iterable[str]
) -> tuple[list[dict[str, Any]], dict[str, tuple[int, int]]]:
    """The calibration grid with the config fields in `fixed` (those the user set) held at
    the env's values: cells that would override them are dropped.

    Returns the cells and, per narrowed field, (cells kept, cells in the full grid)."""
    full = env.calibration_grid()
    values = env.config.as_dict()
    held = {k for k in fixed if any(k in cell for cell in full)}
    kept = [cell for cell in full if all(cell[k] == values[k] for k in held if k in cell)]
    if not kept:  # a value outside the sweep: one cell, at the user's config
        kept = [{k: v for k, v in cell.items() if k not in held} for cell in full[:1]]
    counts = {k: (len(kept), len(full)) for k in sorted(held)}
    return kept, counts


def calibration_size(
    env: Environment,
    n: int | None,
    policies: Sequence[str] | None = None,
    split: str = "eval",
    grid: Sequence[dict[str, Any]] | None = None,
) -> int:
    """How many episodes `calibrate` will play (for progress bars)."""
    total = 0
    for overrides in env.calibration_grid() if grid is None else grid:
        cell_env = env.with_config(**overrides) if overrides else env
        total += len(list(policies or cell_env.policies())) * len(cell_env.tasks(split, n))
    return total
