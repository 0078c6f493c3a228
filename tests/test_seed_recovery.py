"""The seed-recovery attack: an agent that has the package identifies its task from the first
thing it sees, rebuilds the world with the public generator, and reads the truth.

On a public split that scores 1.0: public splits are reproducible by anyone, which is what
they are for (published, comparable tables). On the private split, whose seeds are keyed by a
secret, no public world matches, and the attack is left with its honest fallback: it scores
no more than that fallback played honestly.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core import seeding
from datagauntlet.core.episode import Task
from datagauntlet.core.runner import play

SECRET = "leaderboard-secret-for-the-seed-recovery-test"
VICTIMS = 12


# --- what the attacker sees first, and how it plays once it knows the world ----------------
def _dataclean_key(ep: Any) -> str:
    return ep.prompt  # the table is inline: the first observation, no tool call


def _dataclean_exploit(ep: Any, world: Any) -> None:
    """Map every dirty value to its true value, column by column; keep one row per record."""
    editable = [c.name for c in world.family.editable]
    program: list[dict[str, Any]] = [{"op": "strip", "columns": editable}]
    key_col = world.dirty.data["record_id"]
    truth_of = dict(zip(world.truth.data["record_id"], range(len(world.truth)), strict=True))
    for col in world.family.editable:
        mapping: dict[str, Any] = {}
        for rid, dirty in zip(key_col, world.dirty.data[col.name], strict=True):
            true = world.truth.data[col.name][truth_of[rid]]
            if dirty is not None and dirty.strip() != true:
                mapping[dirty.strip()] = true
        if mapping:
            program.append({"op": "map", "column": col.name, "mapping": mapping})
    program.append({"op": "dedupe", "keys": ["record_id"]})
    ep.call("submit_program", {"operations": program})


def _dataclean_world(env: Any, task: Task) -> Any:
    from datagauntlet.envs.dataclean.world.generator import generate

    return generate(task.seed, env.config)


def _di_key(ep: Any) -> str:
    for _ in range(4):  # past a timeout or two
        page = ep.call("fetch_page", {"cursor": None})
        if "records" in page:
            return str(page["records"][0]["id"])
    return ""


def _di_exploit(ep: Any, world: Any) -> None:
    records = [{"id": r.id, "amount": r.amount} for r in world.records]
    ep.call("submit_records", {"records": records})


def _di_world(env: Any, task: Task) -> Any:
    from datagauntlet.envs.dirty_integration.world import World

    return World(task.seed, env.config)


def _bbg_key(ep: Any) -> str:
    listing = ep.call("list_batches", {})["batches"]
    parts = []
    for b in listing:
        row = ep.call("run_sql", {"query": f"SELECT * FROM {b['staging_table']} LIMIT 1"})
        parts.append(f"{b['batch_id']}:{b['rows']}:{row.get('rows')}")
    return "|".join(parts)


def _bbg_exploit(ep: Any, case: Any) -> None:
    loaded, quarantined = [], []
    order = sorted(case.batches, key=lambda b: b.table != "customers")
    for b in order:
        ep.call("profile_batch", {"batch_id": b.batch_id})
    for b in order:
        truth = b.truth
        if truth.action == "quarantine":
            groups = [sorted(g)[0] for g in truth.groups]
            args: dict[str, Any] = {"batch_id": b.batch_id, "column": groups[0][0]}
            args["defect_type"] = groups[0][1]
            if case.extended and len(groups) > 1:
                args["more_citations"] = [{"column": c, "defect_type": k} for c, k in groups[1:]]
            ep.call("quarantine_batch", args)
            quarantined.append(b.batch_id)
        else:
            load: dict[str, Any] = {"batch_id": b.batch_id}
            if truth.bad_rows:
                load["hold_back"] = list(truth.bad_rows)
            ep.call("load_batch", load)
            loaded.append(b.batch_id)
    ep.call("submit_report", {"loaded": sorted(loaded), "quarantined": sorted(quarantined)})


def _bbg_world(env: Any, task: Task) -> Any:
    return env.case(task)


ATTACKS: dict[str, tuple[Callable, Callable, Callable, str]] = {
    "dataclean": (_dataclean_key, _dataclean_world, _dataclean_exploit, "generic"),
    "dirty-integration": (_di_key, _di_world, _di_exploit, "naive"),
    "bad-batch-gate": (_bbg_key, _bbg_world, _bbg_exploit, "naive"),
}


def _index(env: Any, key: Callable) -> dict[str, Task]:
    """The attacker's table: first observation -> public task, over every public split."""
    out = {}
    for split in seeding.SPLITS:
        for task in env.tasks(split, 40):
            ep = env.episode(task)
            try:
                out[key(ep)] = task
            finally:
                ep.close()
    return out


def _attack(env: Any, index: dict[str, Task] | None, task: Task) -> float:
    """The attack; with no index, the same first look followed by the honest fallback."""
    key, world_of, exploit, fallback = ATTACKS[env.id]
    ep = env.episode(task)
    try:
        match = None if index is None else index.get(key(ep))
        if index is None:
            key(ep)
        if match is not None:
            exploit(ep, world_of(env, match))
        else:  # no public world looks like this one: play honestly
            env.policies()[fallback](ep)
        return ep.score().reward
    finally:
        ep.close()


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)


@pytest.mark.parametrize("env_id", sorted(ATTACKS))
def test_seed_recovery_wins_on_public_and_gains_nothing_on_private(
    env_id: str, secret: None
) -> None:
    env = dg.make(env_id)
    key = ATTACKS[env_id][0]
    index = _index(env, key)
    public = env.tasks("eval", VICTIMS)
    assert [_attack(env, index, t) for t in public] == [1.0] * VICTIMS
    honest_public = statistics.fmean(_attack(env, None, t) for t in public)
    assert honest_public < 1.0  # the recovery is what wins there, not the fallback
    private = env.tasks("private", VICTIMS)
    attacked = [_attack(env, index, t) for t in private]
    honest = [_attack(env, None, t) for t in private]
    assert statistics.fmean(attacked) <= statistics.fmean(honest)
    assert attacked == honest  # no private task was recognised
    assert statistics.fmean(attacked) <= statistics.fmean(
        play(env, env.reference, t).reward for t in private
    )
