"""The family_module hook: a module outside the package adds a family and its own seeds."""

from __future__ import annotations

import json

import pytest

from datagauntlet.envs.event_recon import splits
from datagauntlet.envs.event_recon.grading.reconciler import reconcile_files
from datagauntlet.envs.event_recon.world.generator import build_task

MODULE = "family_fixture"


def test_module_split_uses_the_modules_seeds_and_families() -> None:
    tasks = splits.split_tasks("holdout", MODULE)
    assert [t.seed for t in tasks] == [1000 + 7 * i for i in range(8)]
    assert [t.tier for t in tasks] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert all(t.canary == splits.CANARY for t in tasks)
    families = splits.families_of(tasks[0])
    assert "backfill_reemission" in families and len(families) == 13
    assert "holdout" in splits.split_names(MODULE)


def test_the_modules_family_is_planted_published_and_cross_checked() -> None:
    families = splits.families_for(MODULE)
    for seed in range(60):
        world = build_task(seed, 4, families)  # cross-checked, or TaskRefused
        hits = [d for d in world.manifest if d.family == "backfill_reemission"]
        if hits:
            assert "`backfill_reemission`" in world.files["INTEGRATION.md"].decode()
            assert reconcile_files(world.files) == world.correct
            assert hits[0].partner_id in world.broken_partners
            wire = [json.loads(x) for x in world.files["webhooks.jsonl"].decode().splitlines()]
            copies = [e for e in wire if e["event_id"] in hits[0].evidence and e["backfill"]]
            assert copies and all(e["type"] == "order.refunded" for e in copies)
            return
    raise AssertionError("backfill_reemission was never drawn in 60 tier-4 tasks")


def test_public_tasks_never_change_with_a_module() -> None:
    public = splits.public_tasks()[0]
    moved = splits.TaskRecord(
        public.index, public.seed, public.tier, "public", family_module=MODULE
    )
    assert splits.families_of(moved) is splits.families_for(None)


class _NoName:
    where = "wire"


def test_a_malformed_family_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import family_fixture

    monkeypatch.setattr(family_fixture, "FAMILIES", [_NoName()])
    from datagauntlet.core.family_module import load_family_module

    load_family_module.cache_clear()
    splits.families_for.cache_clear()
    try:
        with pytest.raises(ValueError, match="lacks name"):
            splits.families_for(MODULE)
    finally:
        load_family_module.cache_clear()
        splits.families_for.cache_clear()


def test_held_out_splits_need_the_secret_and_are_keyed_by_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datagauntlet.core.seeding import SecretMissing

    monkeypatch.delenv("DATAGAUNTLET_SECRET", raising=False)
    monkeypatch.delenv("DATAGAUNTLET_SECRET_FILE", raising=False)
    with pytest.raises(SecretMissing):
        splits.split_tasks("private")
    monkeypatch.setenv("DATAGAUNTLET_SECRET", "a-secret-of-at-least-16-bytes")
    private = splits.split_tasks("private")
    assert [sum(t.tier == k for t in private) for k in (1, 2, 3, 4)] == [30] * 4
    assert not {t.seed for t in private} & {t.seed for t in splits.public_tasks()}
    assert all(t.canary == splits.CANARY for t in private)
    monkeypatch.setenv("DATAGAUNTLET_SECRET", "another-secret-of-16-bytes-or-more")
    assert {t.seed for t in splits.split_tasks("private")}.isdisjoint(t.seed for t in private)


def test_a_family_clashing_with_a_builtin_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import family_fixture

    from datagauntlet.core.family_module import load_family_module
    from datagauntlet.envs.event_recon.world.families import builtin_families

    monkeypatch.setattr(family_fixture, "FAMILIES", [builtin_families()["schema_drift"]])
    load_family_module.cache_clear()
    splits.families_for.cache_clear()
    try:
        with pytest.raises(ValueError, match="already exists"):
            splits.families_for(MODULE)
    finally:
        load_family_module.cache_clear()
        splits.families_for.cache_clear()
