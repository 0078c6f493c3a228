"""Play policies over tasks, in process or across worker processes, in a fixed result order."""

from __future__ import annotations

import hashlib
import os
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.core.registry import make
from datagauntlet.core.score import Score

Progress = Callable[[int], None]  # called with the number of episodes just finished
Job = tuple[str, dict[str, Any], str, dict[str, Any]]  # (env id, config, policy, task)


class Mapper:
    """Plays jobs somewhere else and yields their results in the order of the jobs.

    One mapper serves a whole run (every calibration cell), so a pool starts once. The default
    uses this machine's worker processes; `frontdoors/ray_mapper.py` spreads jobs as Ray tasks.
    """

    def map(self, jobs: list[Job]) -> Iterable[EpisodeResult]:
        raise NotImplementedError

    def close(self) -> None:
        """Release the pool; safe to call twice."""


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
    stamp: dict[str, str] = field(default_factory=dict)  # versions and the task's hash

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
            "stamp": self.stamp,
        }


@dataclass(frozen=True)
class Outcome:
    """One played episode as the runner and the reports see it."""

    score: Score
    calls: int
    facts: dict[str, Any]  # the env's `report_facts` of the finished episode


def play_episode(
    env: Environment[Any], policy_name: str, task: Task, facts: bool = False
) -> Outcome:
    """Play one policy on one task in a fresh episode, closed whatever happens. With `facts`,
    the env's `report_facts` of the finished episode come back too (for its tables)."""
    policies = env.policies()
    if policy_name not in policies:
        raise ValueError(f"{env.id} has no policy {policy_name!r}; choose from {sorted(policies)}")
    ep = env.episode(task)
    try:
        policies[policy_name](ep)
        score = ep.score()
        extra = env.report_facts(ep) if facts else {}
    finally:
        ep.close()
    return Outcome(score, ep.calls, extra)


def play(env: Environment[Any], policy_name: str, task: Task) -> EpisodeResult:
    outcome = play_episode(env, policy_name, task)
    score = outcome.score
    return EpisodeResult(
        env.id,
        env.config.as_dict(),
        policy_name,
        task.as_dict(),
        score.reward,
        {k: c["value"] for k, c in score.components.items()},
        score.metrics,
        outcome.calls,
        score.stamp,
    )


# Each worker process builds its env once (per config) and plays jobs sent to it by index.
_WORKER_ENVS: dict[tuple[str, str], Environment] = {}


def _play_job(job: Job) -> EpisodeResult:
    env_id, config, policy_name, task = job
    key = (env_id, repr(sorted(config.items())))
    env = _WORKER_ENVS.get(key)
    if env is None:
        env = _WORKER_ENVS[key] = make(env_id, **config)
    return play(env, policy_name, Task(**task))


def play_jobs(jobs: Sequence[Job]) -> list[EpisodeResult]:
    """A batch of jobs in one worker (a Ray task plays a batch: one episode is too little)."""
    return [_play_job(job) for job in jobs]


# Batches a worker gets per map: enough that the pool's last batch (while the other workers
# have none left) is short, few enough that sending them costs nothing next to playing them.
BATCHES_PER_WORKER = 16


def task_groups(jobs: Sequence[Job]) -> list[list[Job]]:
    """Consecutive jobs of one task (same env, config and task) grouped together."""
    groups: list[list[Job]] = []
    last: tuple[str, dict[str, Any], dict[str, Any]] | None = None
    for job in jobs:
        key = (job[0], job[1], job[3])
        if groups and key == last:
            groups[-1].append(job)
        else:
            groups.append([job])
            last = key
    return groups


class ProcessMapper(Mapper):
    """This machine's worker processes, started on first use and kept for the whole run.

    `map` sends every batch at once (so a second `map` queues behind the first and the workers
    never wait between them) and yields results in job order. A batch holds whole tasks: a
    task's world, which envs cache, is then built in one worker for all of its policies."""

    def __init__(self, workers: int) -> None:
        self.workers = min(workers, os.cpu_count() or 1)
        self._pool: ProcessPoolExecutor | None = None

    def map(self, jobs: list[Job]) -> Iterable[EpisodeResult]:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        groups = task_groups(jobs)
        size = max(1, len(groups) // (self.workers * BATCHES_PER_WORKER))
        batches = [
            [job for group in groups[i : i + size] for job in group]
            for i in range(0, len(groups), size)
        ]
        return _in_order([self._pool.submit(play_jobs, batch) for batch in batches])

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _in_order(futures: list[Future[list[EpisodeResult]]]) -> Iterator[EpisodeResult]:
    try:
        for future in futures:
            yield from future.result()
    finally:  # a consumer that stops early (an error) leaves nothing queued behind it
        for future in futures:
            future.cancel()


def run(
    env: Environment,
    policy_names: Sequence[str],
    tasks: Sequence[Task],
    workers: int = 1,
    progress: Progress | None = None,
    mapper: Mapper | None = None,
) -> list[EpisodeResult]:
    """Every (policy, task) pair, ordered by policy then task, wherever they are played."""
    jobs = [(p, t) for p in policy_names for t in tasks]
    if mapper is not None and len(jobs) >= 2:
        payload = [(env.id, env.config.as_dict(), p, t.full_dict()) for p, t in jobs]
        out = []
        for result in mapper.map(payload):
            out.append(result)
            if progress:
                progress(1)
        return out
    if workers <= 1 or len(jobs) < 2:
        out = []
        for p, t in jobs:
            out.append(play(env, p, t))
            if progress:
                progress(1)
        return out
    own = ProcessMapper(workers)
    try:
        return run(env, policy_names, tasks, 1, progress, own)
    finally:
        own.close()


@dataclass(frozen=True)
class CalibrationRow:
    config: dict[str, Any]
    policy: str
    n: int
    mean_reward: float
    min_reward: float
    components: dict[str, float]
    metrics: dict[str, float]
    # The code's versions, and one digest of the content hashes of the tasks played in order:
    # rows with different stamps are not comparable.
    versions: dict[str, str] = field(default_factory=dict)
    tasks_hash: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "policy": self.policy,
            "n": self.n,
            "mean_reward": self.mean_reward,
            "min_reward": self.min_reward,
            "components": self.components,
            "metrics": self.metrics,
            "versions": self.versions,
            "tasks_hash": self.tasks_hash,
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
        versions = {k: v for k, v in rs[0].stamp.items() if k != "task_hash"}
        hashes = "\n".join(r.stamp.get("task_hash", "") for r in rs)
        tasks_hash = hashlib.sha256(hashes.encode()).hexdigest()[:32]
        rows.append(
            CalibrationRow(
                config,
                policy,
                len(rs),
                _mean(rewards),
                min(rewards),
                comps,
                metrics,
                versions,
                tasks_hash,
            )
        )
    return rows


def _mean(values: Iterable[float]) -> float:
    return round(statistics.fmean(values), 6)


class PendingCalibration:
    """A calibration whose jobs are already with the mapper (if any); `rows()` collects it."""

    def __init__(
        self,
        env: Environment,
        cells: list[tuple[dict[str, Any], Environment, list[str]]],
        split: str,
        n: int | None,
        pool: Mapper | None,
        own: Mapper | None,
    ) -> None:
        self.env, self.cells, self.split, self.n = env, cells, split, n
        self._own = own
        self._played: Iterator[EpisodeResult] | None = None
        self._shapes: list[tuple[int, int]] = []
        if pool is not None:
            # Every cell's jobs in one map: workers never wait at a cell's end for the slowest
            # batch while the next cell's jobs are not yet sent. Jobs go task by task (all
            # policies of a task together), so a task's world, which envs cache, is built in
            # one worker rather than in each; results come back in policy-major order.
            jobs: list[Job] = []
            for _, cell_env, names in cells:
                tasks = cell_env.tasks(split, n)
                config = cell_env.config.as_dict()
                jobs += [(env.id, config, p, t.full_dict()) for t in tasks for p in names]
                self._shapes.append((len(names), len(tasks)))
            self._played = iter(pool.map(jobs))

    def rows(self, progress: Progress | None = None) -> list[CalibrationRow]:
        rows: list[CalibrationRow] = []
        try:
            if self._played is None:
                for overrides, cell_env, names in self.cells:
                    results = run(cell_env, names, cell_env.tasks(self.split, self.n), 1, progress)
                    rows.extend(summarize(cell_env.config.changed() or overrides, results))
                return rows
            shapes = zip(self.cells, self._shapes, strict=True)
            for (overrides, cell_env, _), (n_policies, n_tasks) in shapes:
                results: list[EpisodeResult | None] = [None] * (n_policies * n_tasks)
                for t in range(n_tasks):
                    for p in range(n_policies):
                        results[p * n_tasks + t] = next(self._played)
                        if progress:
                            progress(1)
                rows.extend(summarize(cell_env.config.changed() or overrides, results))  # type: ignore[arg-type]
        finally:
            if self._own is not None:
                self._own.close()
        return rows


def start_calibration(
    env: Environment,
    n: int | None = None,
    split: str = "eval",
    workers: int = 1,
    policies: Sequence[str] | None = None,
    mapper: Mapper | None = None,
    grid: Sequence[dict[str, Any]] | None = None,
) -> PendingCalibration:
    """`calibrate` in two steps: its jobs go to the mapper now, its rows come from `rows()`.
    Starting the next env's before collecting this one's keeps the workers busy between envs."""
    own = ProcessMapper(workers) if mapper is None and workers > 1 else None
    cells = []
    for overrides in env.calibration_grid() if grid is None else grid:
        cell_env = env.with_config(**overrides) if overrides else env
        cells.append((overrides, cell_env, list(policies or cell_env.policies())))
    return PendingCalibration(env, cells, split, n, mapper or own, own)


def calibrate(
    env: Environment,
    n: int | None = None,
    split: str = "eval",
    workers: int = 1,
    progress: Progress | None = None,
    policies: Sequence[str] | None = None,
    mapper: Mapper | None = None,
    grid: Sequence[dict[str, Any]] | None = None,
) -> list[CalibrationRow]:
    """The env's calibration grid (or `grid`): every config override x every policy over `n`
    tasks. With `workers` > 1 and no `mapper`, one process pool serves every cell."""
    return start_calibration(env, n, split, workers, policies, mapper, grid).rows(progress)


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
