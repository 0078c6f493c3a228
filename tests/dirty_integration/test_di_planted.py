"""Rules that only a golden table caught until these tests existed."""

from __future__ import annotations

import datagauntlet as dg
from datagauntlet.envs.dirty_integration.api import Api
from datagauntlet.envs.dirty_integration.config import DirtyIntegrationConfig
from datagauntlet.envs.dirty_integration.world import World


def test_a_submission_of_only_invented_ids_earns_no_budget_credit() -> None:
    env = dg.make("dirty-integration", profile="clean")
    ep = env.episode(env.tasks("eval", n=1)[0])
    invented = [{"id": f"rec_invented{i}", "amount": 1} for i in range(5)]
    ep.call("submit_records", {"records": invented})
    values = {k: c["value"] for k, c in ep.score().components.items()}
    assert values["budget_discipline"] == 0.0
    assert values["completeness"] == 0.0


def test_a_cursor_repeat_never_happens_on_the_last_page() -> None:
    config = DirtyIntegrationConfig(profile="hostile", num_records=8, page_size=4)
    repeats_on_last = 0
    for seed in range(300):
        world = World(seed, config)
        api = Api(world)
        last = world.cursors[-1]
        for _ in range(world.quota or 0):
            index = api.requests
            status, body = api.fetch(last)
            if status == 200 and world.faults(index).cursor_repeat:
                repeats_on_last += 1
                assert body["next_cursor"] is None
    assert repeats_on_last > 20  # the case is really exercised


def test_type_drift_and_timeouts_are_independent_draws() -> None:
    config = DirtyIntegrationConfig(profile="hostile", num_records=100_000, page_size=100)
    world = World(11, config)
    faults = [world.faults(i) for i in range(3_000)]
    timed_out = [f for f in faults if f.timeout]
    drift_given_timeout = sum(f.type_drift for f in timed_out) / len(timed_out)
    drift_overall = sum(f.type_drift for f in faults) / len(faults)
    assert len(timed_out) > 200
    assert abs(drift_given_timeout - drift_overall) < 0.08
    assert abs(drift_overall - config.rates.type_drift) < 0.05


def test_no_submission_reports_no_duplicates_and_every_record_missed() -> None:
    env = dg.make("dirty-integration", profile="clean")
    ep = env.episode(env.tasks("eval", n=1)[0])
    metrics = ep.score().metrics
    assert metrics["duplicates_submitted"] == 0
    assert metrics["records_missed"] == env.config.num_records
