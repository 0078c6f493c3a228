"""The API's faults: pure in (seed, request index), bounded so every seed is winnable."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

import datagauntlet as dg
from datagauntlet.core.runner import play
from datagauntlet.envs.dirty_integration.world import World


def _world(profile: str = "hostile", index: int = 0, **kw: int) -> World:
    env = dg.make("dirty-integration", profile=profile, **kw)
    return World(env.tasks("eval", index + 1)[index].seed, env.config)


def test_a_fault_does_not_depend_on_earlier_requests() -> None:
    forward = _world()
    a = [forward.faults(i) for i in range(40)]
    backward = _world()
    b = [backward.faults(i) for i in reversed(range(40))][::-1]
    assert a == b


def test_an_extra_retry_does_not_shift_later_faults() -> None:
    env = dg.make("dirty-integration", profile="hostile")
    task = env.tasks("eval", 1)[0]
    plain, extra = env.episode(task), env.episode(task)
    extra.call("fetch_page", {"cursor": None})  # one more request than `plain` makes
    plain_results = [plain.call("fetch_page", {"cursor": None}) for _ in range(12)]
    extra_results = [extra.call("fetch_page", {"cursor": None}) for _ in range(11)]
    assert extra_results == plain_results[1:]


@pytest.mark.parametrize(("profile", "factor"), [("realistic", 2.0), ("hostile", 2.2)])
def test_quota_scales_with_pages_and_never_resets(profile: str, factor: float) -> None:
    for records, size in ((40, 4), (200, 10), (37, 5)):
        w = _world(profile, num_records=records, page_size=size)
        assert w.quota == math.ceil(factor * math.ceil(records / size))
    env = dg.make("dirty-integration", profile=profile)
    ep = env.episode(env.tasks("eval", 1)[0])
    quota = ep.world.quota
    assert quota is not None
    results = [ep.call("fetch_page", {"cursor": None}) for _ in range(quota + 20)]
    assert all(r.get("status") == 429 for r in results[quota:])
    assert all(set(r) == {"error", "status"} for r in results[quota:])  # no retry hint


def test_timeouts_carry_no_data_and_spend_quota() -> None:
    env = dg.make("dirty-integration", profile="hostile")
    for task in env.tasks("eval", 20):
        ep = env.episode(task)
        for _ in range(30):
            r = ep.call("fetch_page", {"cursor": None})
            if r.get("status") == 504:
                assert set(r) == {"error", "status"}
                assert ep.api.timeouts >= 1 and ep.api.requests >= 1
                return
    pytest.fail("no timeout in 20 hostile tasks")


def test_clean_profile_has_no_faults() -> None:
    w = _world("clean")
    assert w.quota is None
    assert all(f == (False, False, False, 0) for f in (tuple(w.faults(i)) for i in range(200)))


def test_each_fault_kind_fires_on_realistic_and_hostile() -> None:
    for profile in ("realistic", "hostile"):
        kinds = {"timeout": 0, "cursor_repeat": 0, "type_drift": 0, "inflate": 0}
        for index in range(30):
            w = _world(profile, index)
            for r in range(w.quota or 0):
                f = w.faults(r)
                kinds["timeout"] += f.timeout
                kinds["cursor_repeat"] += f.cursor_repeat
                kinds["type_drift"] += f.type_drift
                kinds["inflate"] += f.inflate_by > 0
        assert all(v > 0 for v in kinds.values()), (profile, kinds)


@pytest.mark.parametrize("profile", ["clean", "realistic", "hostile"])
@pytest.mark.parametrize(("records", "size"), [(40, 4), (200, 10)])
def test_careful_scores_one_on_every_seed(profile: str, records: int, size: int) -> None:
    env = dg.make("dirty-integration", profile=profile, num_records=records, page_size=size)
    for split in ("eval", "test"):
        for task in env.tasks(split, 60):
            result = play(env, "careful", task)
            assert result.reward == 1.0, (split, task.id, result.metrics)


def test_world_is_identical_under_any_pythonhashseed() -> None:
    code = (
        "import datagauntlet as dg, hashlib, json;"
        "env = dg.make('dirty-integration', profile='hostile');"
        "ep = env.episode(env.tasks('eval', 1)[0]);"
        "out = [ep.call('fetch_page', {'cursor': None}) for _ in range(25)];"
        "print(hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest())"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": hs},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hs in ("0", "99", "random")
    }
    assert len(digests) == 1


def test_ids_and_cursors_carry_no_order() -> None:
    w = _world("realistic", num_records=200, page_size=10)
    ids = [r.id for r in w.records]
    assert len(set(ids)) == len(ids)
    assert ids != sorted(ids)
    assert w.cursors != sorted(w.cursors)
    amounts = [r.amount for r in w.records]
    assert amounts != sorted(amounts)
