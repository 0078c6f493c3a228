"""The contamination canary, both halves: it is on every record event-recon exports for a task
(task dicts, task_info labels and verifiers rows, run files, gate JSON) and in no workspace."""

from __future__ import annotations

from typing import Any

import pytest

from datagauntlet.core.gates import run_gates
from datagauntlet.core.runner import play
from datagauntlet.envs.event_recon import canary
from datagauntlet.envs.event_recon.env import EventReconEnv
from datagauntlet.envs.event_recon.gates.world_checks import world_of
from datagauntlet.envs.event_recon.splits import CANARY, public_tasks
from datagauntlet.envs.event_recon.world.records import World


@pytest.fixture(scope="module")
def env() -> EventReconEnv:
    return EventReconEnv()


def test_every_public_task_record_carries_the_canary(env: EventReconEnv) -> None:
    tasks = env.tasks("public")
    assert len(tasks) == 120 and CANARY.startswith("event-recon-canary:")
    for task in tasks:
        for record in canary.exported_records(env, task):
            assert record.get("canary") == CANARY, (task.id, record)
    assert sum(canary.on_records(env, t) for t in tasks) == 120


def test_no_public_workspace_holds_a_canary(public_worlds: tuple[World, ...]) -> None:
    records = public_tasks()
    assert [w.seed for w in public_worlds] == [r.seed for r in records]
    held = [
        r.index for r, w in zip(records, public_worlds, strict=True) if canary.in_workspace(w.files)
    ]
    assert held == []  # 0/120
    planted = dict(world_of(records[0]).files)
    planted["webhooks.jsonl"] += CANARY.encode()
    assert canary.in_workspace(planted)  # the scan sees one when it is there


def test_a_run_file_record_and_the_gate_json_carry_it(env: EventReconEnv) -> None:
    task = env.tasks("public", 1)[0]
    result = play(env, "null", task)
    assert result.task["canary"] == CANARY
    report = run_gates(env, "public", 2, only=["canary"]).as_dict()
    assert report["canary"] == CANARY
    assert [g["value"] for g in report["gates"]] == ["2/2 / 0/2"]


def test_the_published_gate_files_carry_it() -> None:
    from datagauntlet.envs.event_recon.gates import gate_report

    files = [gate_report.REPORT, gate_report.PRIVATE_REPORT]
    published = [gate_report.load(f) for f in files if f.exists()]
    assert published and all(r["canary"] == CANARY for r in published)
    assert all(r["tiers"] for r in published)  # each names the tasks it is a record of


def test_held_out_task_records_carry_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATAGAUNTLET_SECRET", "a-secret-of-at-least-16-bytes")
    env = EventReconEnv()
    for task in env.tasks("private", 8):
        assert canary.on_records(env, task), task.id


def test_every_verifiers_row_carries_it() -> None:
    vf: Any = pytest.importorskip("verifiers.v1")
    from datagauntlet.frontdoors.vf.taskset import taskset_for

    cfg = vf.resolve_env_config(
        {"taskset": {"id": "event-recon", "split": "eval", "num_tasks": 120, "max_turns": 1000}}
    ).taskset
    rows = list(taskset_for("event-recon")(cfg))
    assert len(rows) == 120
    assert all(r.data.metadata.get("canary") == CANARY for r in rows)
