"""The runner gives the same results in the same order for any worker count."""

import datagauntlet as dg
from datagauntlet.core.runner import calibrate, run


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
