"""The runner gives the same results in the same order for any worker count."""

from collections.abc import Iterable

import datagauntlet as dg
from datagauntlet.core.runner import (
    EpisodeResult,
    Job,
    Mapper,
    ProcessMapper,
    calibrate,
    play_jobs,
    run,
    start_calibration,
    task_groups,
)


def test_workers_do_not_change_results_or_order() -> None:
    env = dg.make("dirty-integration", profile="hostile")
    tasks = env.tasks("eval", 8)
    one = [r.as_dict() for r in run(env, ["naive", "careful"], tasks, workers=1)]
    two = [r.as_dict() for r in run(env, ["naive", "careful"], tasks, workers=2)]
    assert one == two
    assert [(r["policy"], r["task"]["index"]) for r in one] == [
        (p, i) for p in ("naive", "careful") for i in range(8)
    ]


def test_progress_is_reported_per_episode() -> None:
    env = dg.make("dirty-integration")
    seen: list[int] = []
    rows = calibrate(env, 3, progress=seen.append, policies=["careful"])
    assert sum(seen) == 3 * len(env.calibration_grid())
    assert [r.config for r in rows] == [{"profile": p} for p in ("clean", "realistic", "hostile")]
    assert all(r.mean_reward == 1.0 and r.n == 3 for r in rows)


class CountingMapper(Mapper):
    """Plays jobs in this process, counting the map calls (a pool is fed per call)."""

    def __init__(self) -> None:
        self.maps: list[int] = []

    def map(self, jobs: list[Job]) -> Iterable[EpisodeResult]:
        self.maps.append(len(jobs))
        return play_jobs(jobs)


def test_a_calibration_sends_every_cell_to_the_pool_in_one_map() -> None:
    env = dg.make("dirty-integration")
    mapper = CountingMapper()
    seen: list[int] = []
    pooled = calibrate(env, 3, progress=seen.append, mapper=mapper)
    cells = len(env.calibration_grid())
    policies = len(env.policies())
    # one map per calibration: no cell waits for the previous cell's slowest chunk
    assert mapper.maps == [cells * policies * 3]
    assert sum(seen) == cells * policies * 3
    assert [r.as_dict() for r in pooled] == [r.as_dict() for r in calibrate(env, 3)]
    two = calibrate(env, 3, workers=2)
    assert [r.as_dict() for r in two] == [r.as_dict() for r in pooled]


def test_task_groups_keep_a_tasks_jobs_together_and_in_order() -> None:
    env = dg.make("dirty-integration")
    a, b = (t.as_dict() for t in env.tasks("eval", 2))
    cfg = env.config.as_dict()
    jobs: list[Job] = [("dirty-integration", cfg, p, t) for t in (a, b, a) for p in ("x", "y")]
    groups = task_groups(jobs)
    assert [len(g) for g in groups] == [2, 2, 2]  # a task met again later is a new group
    assert [j for g in groups for j in g] == jobs
    other = {**cfg, "profile": "hostile"}
    assert (
        len(task_groups([("dirty-integration", cfg, "x", a), ("dirty-integration", other, "x", a)]))
        == 2
    )


def test_the_pool_plays_batches_of_whole_tasks_in_job_order() -> None:
    jobs: list[Job] = []
    for env_id in ("dirty-integration", "bad-batch-gate"):
        env = dg.make(env_id)
        cfg = env.config.as_dict()
        jobs += [
            (env_id, cfg, p, t.as_dict()) for t in env.tasks("eval", 3) for p in env.policies()
        ]
    mapper = ProcessMapper(2)
    try:
        pooled = [r.as_dict() for r in mapper.map(jobs)]
    finally:
        mapper.close()
    assert pooled == [r.as_dict() for r in play_jobs(jobs)]


def test_every_envs_jobs_are_queued_before_the_first_envs_results_are_read() -> None:
    envs = [dg.make("dirty-integration"), dg.make("bad-batch-gate")]
    mapper = CountingMapper()
    pending = [start_calibration(env, 2, mapper=mapper) for env in envs]
    assert len(mapper.maps) == 2  # both sent, nothing read yet
    for env, calibration in zip(envs, pending, strict=True):
        assert [r.as_dict() for r in calibration.rows()] == [r.as_dict() for r in calibrate(env, 2)]
