"""The gates on the held-out split: tier-balanced samples, every world row run on private tasks
(over zero tasks a row fails), and a private figure file that names the secret but holds
neither it nor a seed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core import seeding
from datagauntlet.envs.event_recon.gates import gate_report, world_rows
from datagauntlet.envs.event_recon.gates import gates as er_gates

SECRET = "a-secret-for-the-private-gates-0001"


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    return SECRET


@pytest.fixture
def no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.delenv(seeding.SECRET_ENV, raising=False)


@pytest.mark.parametrize("split", ["private", "private-train"])
@pytest.mark.parametrize("n", [4, 8, 12])
def test_the_first_n_private_tasks_are_tier_balanced(secret: str, split: str, n: int) -> None:
    env = dg.make("event-recon")
    tiers = [env.tier_of(t) for t in env.tasks(split, n)]  # type: ignore[attr-defined]
    assert [tiers.count(k) for k in (1, 2, 3, 4)] == [n // 4] * 4


def test_the_whole_private_split_is_still_thirty_a_tier(secret: str) -> None:
    env = dg.make("event-recon")
    tiers = [env.tier_of(t) for t in env.tasks("private")]  # type: ignore[attr-defined]
    assert len(tiers) == 120 and [tiers.count(k) for k in (1, 2, 3, 4)] == [30] * 4


def test_workspace_determinism_runs_on_private_tasks(secret: str) -> None:
    env = dg.make("event-recon")
    row = world_rows.determinism_row(env, env.tasks("private", 2))
    assert row.ok and row.value == "2/2", row


def test_world_rows_over_zero_tasks_fail() -> None:
    env = dg.make("event-recon")
    for row in (
        world_rows.determinism_row(env, []),
        world_rows.cross_check_row(env, []),
        world_rows.leakage_row(env, []),
        world_rows.canary_row(env, []),
        er_gates.probe_max("x", []),
        er_gates.oracle_min([]),
        er_gates.invariant7_row("w", [], []),
        er_gates.attacker_rows("w", [], [])[0],
    ):
        assert not row.ok, row


def test_sweep_and_cheap_rows_over_zero_tasks_fail() -> None:
    env = dg.make("event-recon")
    assert not any(r.ok for r in er_gates.sweep_rows(env, [], workers=1))
    assert not any(r.ok for r in er_gates.cheap_rows(env, [], workers=1))


def test_train_tasks_have_no_table_to_rebuild_so_they_count_as_no_tasks() -> None:
    env = dg.make("event-recon")
    row = world_rows.determinism_row(env, env.tasks("train", 1))
    assert not row.ok and row.value == "0/0"


def test_the_private_figures_name_the_secret_by_its_public_id(secret: str) -> None:
    field = gate_report._secret_field("private")
    assert field == {"secret_id": seeding.secret_id()} and SECRET not in json.dumps(field)
    assert gate_report._secret_field("public") == {}
    rows = {"name": "x", "value": 1, "bound": "== 1", "ok": True}
    report = {"tasks": 120, "split": "private", "rows": [rows], "seconds": 1.0, "workers": 2}
    assert f"(secret {field['secret_id']})" in gate_report.table({**report, **field})


def test_the_secret_id_depends_on_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    first = seeding.secret_id()
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET + "-other")
    assert seeding.secret_id() != first and len(first) == 16


@pytest.mark.parametrize(
    "argv",
    [
        ["--split", "private"],
        ["--split", "private", "--write"],
        ["--split", "private", "--secret-file", "/nonexistent/secret"],
        ["--write", "--out", "x.json"],
        ["--split", "private", "--out", "x.json"],
        ["--split", "private", "--write", "-n", "4"],
    ],
)
def test_private_cli_mistakes_exit_two_in_one_line(
    argv: list[str], no_secret: None, capsys: Any
) -> None:
    assert gate_report.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gate_report: ") and err.count("\n") == 1


def test_a_secret_file_is_accepted(tmp_path: Path, no_secret: None) -> None:
    import argparse

    path = tmp_path / "secret"
    path.write_text(SECRET)
    args = argparse.Namespace(
        workers=1, n=None, write=True, split="private", out=None, secret_file=str(path)
    )
    assert gate_report._refusal(args) is None
    assert seeding.secret_id()  # the file's secret is in use, here and in worker processes


def test_the_report_plays_private_tasks_across_workers(secret: str) -> None:
    """Workers get the whole task, seed included (a private task's public dict masks it, and
    the private gate run once died at its first job)."""
    env = dg.make("event-recon")
    run = gate_report.RecordingRun(env, "private", 2, 2)
    gate_report.prefetch(run, ["null"])
    assert [r.reward for r in run.results("null")] == [0.0, 0.0]


def test_a_cross_check_refusal_on_a_private_task_publishes_no_seed(
    secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datagauntlet.envs.event_recon.gates import world_checks
    from datagauntlet.envs.event_recon.world.generator import TaskRefused

    env = dg.make("event-recon")
    tasks = env.tasks("private", 2)
    seed = env.record(tasks[0]).seed

    def refuse(records: Any) -> Any:
        raise TaskRefused(f"seed {seed} tier 1: generator and reconciler disagree on 1 partner(s)")

    monkeypatch.setattr(world_checks, "cross_check_all", refuse)
    row = world_rows.cross_check_row(env, tasks)
    assert not row.ok and "disagree on 1 partner" in str(row.value)
    assert str(seed) not in str(row.value)
