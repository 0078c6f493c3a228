"""The runner gives the same results in the same order for any worker count."""

from collections.abc import Iterable

import datagauntlet as dg
from datagauntlet.core.runner import EpisodeResult, Job, Mapper, calibrate, play_jobs, run


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
